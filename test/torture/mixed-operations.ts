/**
 * The concurrency torture, for any backend: several worker processes run seeded plans of
 * mixed operations (append, replace, describe, drop and recreate) on a few entries of
 * one store at once; then a snapshot of the store is checked against what the workers
 * were told. The backend is named, not imported: the fixtures open it by name
 * (fixtures/stores.mjs), so every backend runs exactly the same torture.
 */

import { expect } from 'vitest';
import type { IndexRow } from '../../src/memory/model/format.js';
import { utf8Bytes } from '../../src/memory/model/text.js';
import type { RevisionRecord, StoredEntry, TrashedEntry } from '../../src/memory/port.js';
import { type Child, describeEnding, fixture, startChild } from './child.js';
import type { Random } from './seed.js';

/** A backend as the fixtures know it: `sqlite` with a file path, `postgres` with a URL. */
export interface TortureStore {
  readonly backend: 'sqlite' | 'postgres';
  readonly target: string;
}

export interface TortureOptions {
  readonly workers: number;
  readonly operationsPerWorker: number;
  readonly entries: number;
}

type PlannedKind = 'append' | 'replace' | 'describe' | 'recreate';

interface PlannedOperation {
  readonly kind: PlannedKind;
  readonly entry: string;
  readonly pick: number;
}

/** One line a worker printed after a call resolved. */
type Outcome =
  | {
      readonly op: number;
      readonly kind: string;
      readonly entry: string;
      readonly refused: string;
      readonly message: string;
    }
  | {
      readonly op: number;
      readonly kind: 'append' | 'create' | 'replace';
      readonly entry: string;
      readonly token: string;
      readonly revision: number;
      readonly replaced?: string;
    }
  | { readonly op: number; readonly kind: 'describe'; readonly entry: string; readonly revision: number }
  | { readonly op: number; readonly kind: 'drop'; readonly entry: string };

type Acknowledged = Exclude<Outcome, { refused: string }>;

interface Snapshot {
  readonly index: IndexRow[];
  readonly entries: StoredEntry[];
  readonly trash: TrashedEntry[];
  readonly histories: Record<string, RevisionRecord[]>;
}

const USER = 'torture';
const TOKEN = /^\[w[0-9s]+:\d+:(append|create|replace)\]$/;
/**
 * The refusals concurrent writers may legitimately meet, by code: the entry is gone (an
 * append to it would have to create it), or the old text went with it.
 */
const EXPECTED_REFUSALS: Readonly<Record<string, RegExp>> = {
  NOT_FOUND: /^topics\/torture-\d not found/,
  INVALID_ARGUMENT: /^topics\/torture-\d does not exist yet: to create it, pass description/,
  NO_MATCH: /^old text not found in topics\/torture-\d/,
};

function planFor(random: Random, entries: readonly string[], count: number): PlannedOperation[] {
  return Array.from({ length: count }, () => ({
    kind: random.weighted<PlannedKind>([
      ['append', 50],
      ['replace', 20],
      ['describe', 15],
      ['recreate', 5],
    ]),
    entry: entries[random.int(0, entries.length - 1)]!,
    pick: random.int(0, 1_000),
  }));
}

function startWorker(store: TortureStore, worker: string, plan: readonly PlannedOperation[]): Child {
  return startChild(fixture('mixed-operations.mjs'), [store.backend, store.target, worker, JSON.stringify(plan)]);
}

/** Starts all workers, lets them go at once, and returns every outcome they printed. */
async function runWorkers(store: TortureStore, plans: ReadonlyMap<string, PlannedOperation[]>): Promise<Outcome[]> {
  const workers = [...plans].map(([worker, plan]) => startWorker(store, worker, plan));
  await Promise.all(workers.map((worker) => worker.until((lines) => lines[0] === 'ready')));
  for (const worker of workers) worker.process.stdin!.end();
  const outcomes: Outcome[] = [];
  for (const worker of workers) {
    const ending = await worker.ended;
    expect(ending.code, `a worker failed: ${describeEnding(ending)}`).toBe(0);
    expect(worker.lines.at(-1)).toBe('done');
    outcomes.push(...worker.lines.slice(1, -1).map((line) => JSON.parse(line) as Outcome));
  }
  return outcomes;
}

async function takeSnapshot(store: TortureStore): Promise<Snapshot> {
  const child = startChild(fixture('snapshot.mjs'), [store.backend, store.target, USER]);
  const ending = await child.ended;
  expect(ending.code, `the snapshot failed: ${describeEnding(ending)}`).toBe(0);
  return JSON.parse(child.lines[0]!) as Snapshot;
}

/** The tokens of a body, checking that every line is exactly one whole token. */
function tokensOf(body: string): string[] {
  if (body === '') return [];
  const lines = body.split('\n');
  expect(lines.pop(), 'a body ends with a newline').toBe('');
  for (const line of lines) expect(line, 'every line is one whole token').toMatch(TOKEN);
  return lines;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/**
 * Runs the torture and checks: every acknowledged line is present exactly once, in a copy
 * (live, or dropped into the trash) of the entry it was written to, unless its own
 * worker acknowledged replacing it; no other line exists; each live line was introduced
 * by the very revision its write acknowledged; every size is the byte length of its body;
 * the index equals the entries; each acknowledged drop left one copy in the trash.
 */
export async function runTorture(store: TortureStore, random: Random, options: TortureOptions): Promise<void> {
  const entries = Array.from({ length: options.entries }, (_, i) => `topics/torture-${i}`);
  const seeding = new Map([['s', entries.map((entry): PlannedOperation => ({ kind: 'recreate', entry, pick: 0 }))]]);
  const plans = new Map(
    Array.from({ length: options.workers }, (_, w) => [
      String(w),
      planFor(random, entries, options.operationsPerWorker),
    ]),
  );
  const outcomes = [...(await runWorkers(store, seeding)), ...(await runWorkers(store, plans))];
  const snapshot = await takeSnapshot(store);

  const refusals = outcomes.filter((outcome): outcome is Extract<Outcome, { refused: string }> => 'refused' in outcome);
  for (const { refused, kind, message } of refusals) {
    expect(message, `${kind} refused with ${refused}`).toMatch(EXPECTED_REFUSALS[refused] ?? /^(?!)/);
  }
  const acknowledged = outcomes.filter((outcome): outcome is Acknowledged => !('refused' in outcome));
  const written = acknowledged.filter((outcome) => 'token' in outcome);
  expect(written.length, 'no write was acknowledged: the torture proved nothing').toBeGreaterThan(0);

  // The index equals the entries, sorted by name; sizes are the bodies' byte lengths.
  const live = [...snapshot.entries].sort((a, b) => (a.name < b.name ? -1 : 1));
  expect(snapshot.index).toEqual(live.map(({ name, size, description }) => ({ name, size, description })));
  for (const entry of [...snapshot.entries, ...snapshot.trash]) expect(entry.size).toBe(utf8Bytes(entry.body));

  // Every acknowledged line exactly once, in a copy of its own entry; nothing else.
  const replaced = new Set(written.flatMap((outcome) => ('replaced' in outcome && outcome.replaced) || []));
  const expected = new Map(written.filter(({ token }) => !replaced.has(token)).map((o) => [o.token, o.entry]));
  const found = [...snapshot.entries, ...snapshot.trash].flatMap((copy) =>
    tokensOf(copy.body).map((token) => ({ token, entry: copy.name })),
  );
  const foundCounts = countBy(found, ({ token }) => token);
  for (const [token, entry] of expected) {
    expect(foundCounts.get(token) ?? 0, `acknowledged ${token} in ${entry}`).toBe(1);
  }
  for (const { token, entry } of found) expect(expected.get(token), `${token} found in ${entry}`).toBe(entry);

  // Each line of a live entry came from the revision its write acknowledged.
  const byToken = new Map(written.map((outcome) => [outcome.token, outcome]));
  for (const entry of snapshot.entries) {
    const history = snapshot.histories[entry.name]!;
    expect(history.map((revision) => revision.revision)).toEqual(history.map((_, i) => i + 1));
    expect(history.at(-1)).toMatchObject({
      revision: entry.revision,
      body: entry.body,
      description: entry.description,
    });
    for (const token of tokensOf(entry.body)) {
      const write = byToken.get(token)!;
      const introducing = history.find((revision) => revision.body.includes(token));
      const operation = write.kind === 'create' && write.revision > 1 ? 'append' : write.kind;
      expect(introducing, `the revision that wrote ${token}`).toMatchObject({ revision: write.revision, operation });
    }
  }

  // One copy per acknowledged creation, one trashed copy per acknowledged drop.
  const creations = countBy(
    written.filter((outcome) => outcome.kind === 'create' && outcome.revision === 1),
    (outcome) => outcome.entry,
  );
  const copies = countBy([...snapshot.entries, ...snapshot.trash], (copy) => copy.name);
  expect(copies).toEqual(creations);
  const drops = countBy(
    acknowledged.filter((outcome) => outcome.kind === 'drop'),
    (outcome) => outcome.entry,
  );
  expect(countBy(snapshot.trash, (copy) => copy.name)).toEqual(drops);
}
