/**
 * Timing and summarising: run an operation many times, keep every sample, and report
 * medians and tails. Figures are only ever compared within one run, side by side.
 */

import { performance } from 'node:perf_hooks';

export interface Summary {
  readonly samples: number;
  /** Milliseconds. */
  readonly median: number;
  readonly p99: number;
}

/** The q-quantile (0..1) of sorted samples, nearest-rank. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return { samples: sorted.length, median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Figures measured once a round (or a block): their median and their range. */
export interface Spread {
  readonly median: number;
  readonly low: number;
  readonly high: number;
}

/** The median (of an even count, the mean of the middle two) and the range; NaN for none. */
export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, low: Number.NaN, high: Number.NaN };
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, low: sorted[0]!, high: sorted[sorted.length - 1]! };
}

/** One figure over another, round by round (the same round of each), as a spread. */
export function roundRatios(over: readonly number[], under: readonly number[]): Spread {
  return spread(over.map((value, round) => value / under[round]!));
}

/** Milliseconds one call of `operation` takes. */
export async function timeOnce(operation: () => unknown): Promise<number> {
  const start = performance.now();
  await operation();
  return performance.now() - start;
}

/**
 * Runs several operations in turn, round after round, so that each sees the same
 * machine state (disk cache, checkpoints, other load) as its neighbours; returns the
 * samples of each. An operation may run several times per round (`repeats`), each call
 * timed on its own, when it is much cheaper than its neighbours. `warmup` rounds are
 * run first and not kept. With `idleMs`, every call is made after that long a pause
 * (not timed), so that each finds the machine idle, as a call from a model does. With
 * `order`, each round calls the operations in the order it gives for that round (so that
 * no operation always follows the same neighbour and pays for its garbage). With
 * `afterCall`, each call is followed by that step (not timed), given the call's name.
 */
export async function interleave<K extends string>(
  operations: Readonly<Record<K, (call: number) => unknown>>,
  rounds: number,
  options: {
    readonly warmup?: number;
    readonly repeats?: Partial<Record<K, number>>;
    readonly idleMs?: number;
    readonly order?: (round: number) => readonly K[];
    readonly afterCall?: (name: K) => unknown;
  } = {},
): Promise<Record<K, Summary>> {
  const names = Object.keys(operations) as K[];
  const warmup = options.warmup ?? Math.ceil(rounds / 10);
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  const calls = Object.fromEntries(names.map((name) => [name, 0])) as Record<K, number>;
  for (let round = 0; round < warmup + rounds; round++) {
    for (const name of options.order?.(round) ?? names) {
      for (let repeat = 0; repeat < (options.repeats?.[name] ?? 1); repeat++) {
        if (options.idleMs) await sleep(options.idleMs);
        const took = await timeOnce(() => operations[name](calls[name]++));
        await options.afterCall?.(name);
        if (round >= warmup) samples[name].push(took);
      }
    }
  }
  return Object.fromEntries(names.map((name) => [name, summarize(samples[name])])) as Record<K, Summary>;
}

/** `1.23 ms`, `456 µs`, `12.3 s`: three significant figures in the unit that fits. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 1) return `${(ms * 1000).toPrecision(3)} µs`;
  if (ms < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
}

/** `12.3x`. */
export function formatRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return 'n/a';
  return `${ratio >= 100 ? Math.round(ratio) : ratio.toPrecision(3)}x`;
}

/** How a cost changed between two sizes, in words: flat within 1.5x, else how many times it grew. */
export function describeGrowth(before: number, after: number): string {
  const ratio = after / before;
  return ratio <= 1.5 ? `stays flat (${formatRatio(ratio)})` : `grows ${formatRatio(ratio)}`;
}

export function formatInteger(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
