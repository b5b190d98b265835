/**
 * Seeded randomness for the torture tests: a failure must be reproducible, so every run
 * draws from one printed seed (ENGRAM_TORTURE_SEED replays a run) instead of Math.random.
 */

import { onTestFailed } from 'vitest';

export interface Random {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** One of `items`, weighted by its weight. */
  weighted<T>(items: readonly (readonly [T, number])[]): T;
}

/** mulberry32: small, fast and good enough to pick test moments. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    seed,
    next,
    int,
    weighted(items) {
      const total = items.reduce((sum, [, weight]) => sum + weight, 0);
      let pick = next() * total;
      for (const [item, weight] of items) {
        pick -= weight;
        if (pick < 0) return item;
      }
      return items[items.length - 1]![0];
    },
  };
}

/**
 * The current test's randomness: ENGRAM_TORTURE_SEED if set, else a fresh seed, printed
 * if the test fails so the run can be replayed exactly.
 */
export function tortureRandom(): Random {
  const fromEnv = process.env.ENGRAM_TORTURE_SEED;
  const seed = fromEnv ? Number(fromEnv) : Math.floor(Math.random() * 2 ** 32);
  if (!Number.isInteger(seed)) throw new Error(`ENGRAM_TORTURE_SEED must be an integer, not ${fromEnv}`);
  onTestFailed(() => {
    console.error(`torture seed ${seed}: replay with ENGRAM_TORTURE_SEED=${seed}`);
  });
  return seededRandom(seed);
}
