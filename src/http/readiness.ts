/**
 * `/readyz`: whether this server can serve now, asked of its store (a real query and its
 * schema version, StoreHealth.ready) — unlike `/healthz`, which only says the process
 * answers. A probe is bounded: one that has not answered within the timeout is taken as
 * not ready, and at most one runs at a time (the asks that come meanwhile share its
 * answer), so a hanging database never piles up probes. The full reason is logged when
 * readiness changes; the answer, which anyone may read, says only what kind of failure.
 */

import { isEngramError } from '../memory/model/errors.js';

/** How long a probe may take before the server is taken as not ready, in ms. */
export const READY_TIMEOUT_MS = 2_000;

export type Readiness =
  | { readonly ready: true }
  /** `code`: the store's error code (STORE_UNAVAILABLE…), or TIMEOUT; `reason`: a short line without paths or addresses. */
  | { readonly ready: false; readonly code: string; readonly reason: string };

export interface ReadinessOptions {
  /** The store's probe (StoreHealth.ready). */
  readonly probe: () => Promise<void>;
  readonly timeoutMs?: number;
  /** Told, in words, each time readiness changes (the first probe's outcome when it fails). */
  readonly log: (line: string) => void;
}

const REASONS: Record<string, string> = {
  STORE_BUSY: 'the database is busy',
  STORE_READ_ONLY: 'the database cannot be written',
  STORE_FULL: 'the disk holding the database is full',
  STORE_REPLACED: 'the database file was removed or replaced while open',
  STORE_UNAVAILABLE: 'the database cannot be reached or its schema is not current',
};

/** Asks the store at most once at a time; every ask gets the answer of the probe in flight or of a new one. */
export function createReadiness(options: ReadinessOptions): () => Promise<Readiness> {
  const timeoutMs = options.timeoutMs ?? READY_TIMEOUT_MS;
  /** The answer being worked out, shared by the asks that come meanwhile. */
  let inFlight: Promise<Readiness> | undefined;
  /** The store's probe still running, maybe past an earlier ask's timeout: the next ask waits on it rather than start another. */
  let probing: Promise<unknown> | undefined;
  let wasReady = true;

  const tell = (readiness: Readiness, detail: string) => {
    if (readiness.ready === wasReady) return;
    wasReady = readiness.ready;
    options.log(readiness.ready ? 'readyz: ready again' : `readyz: not ready: ${detail}`);
  };

  async function probeOnce(): Promise<Readiness> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    probing ??= options.probe().then(
      () => undefined,
      (error: unknown) => error ?? new Error('the probe failed'),
    );
    const probed = probing;
    void probed.then(() => {
      if (probing === probed) probing = undefined;
    });
    try {
      const outcome = await Promise.race([probed, timedOut]);
      if (outcome === 'timeout') {
        const readiness = {
          ready: false,
          code: 'TIMEOUT',
          reason: `the database did not answer within ${timeoutMs} ms`,
        } as const;
        tell(readiness, readiness.reason);
        return readiness;
      }
      if (outcome === undefined) {
        tell({ ready: true }, '');
        return { ready: true };
      }
      const code = isEngramError(outcome) ? outcome.code : 'INTERNAL';
      const readiness = { ready: false, code, reason: REASONS[code] ?? 'the database failed' } as const;
      tell(readiness, outcome instanceof Error ? outcome.message : String(outcome));
      return readiness;
    } finally {
      clearTimeout(timer);
    }
  }

  return () => {
    inFlight ??= probeOnce().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}
