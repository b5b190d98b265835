/**
 * The HTTP benchmark measures the rows it compares together, in interleaved rounds
 * (bench/load.ts, runInRounds): each target once a round, the order turned by one each
 * round so that none always runs first, and a row made of its rounds as their mean rate.
 */

import { describe, expect, it } from 'vitest';
import { combineRounds, roundOrder } from '../../bench/load.js';

describe('roundOrder', () => {
  it('runs every target once a round, the order turned by one each round', () => {
    expect([0, 1, 2, 3].map((round) => roundOrder(3, round))).toEqual([
      [0, 1, 2],
      [1, 2, 0],
      [2, 0, 1],
      [0, 1, 2],
    ]);
  });

  it('puts each target first in one round of as many rounds as targets', () => {
    const firsts = [0, 1, 2, 3].map((round) => roundOrder(4, round)[0]);
    expect(new Set(firsts)).toEqual(new Set([0, 1, 2, 3]));
  });

  it('runs a target alone in every round', () => {
    expect(roundOrder(1, 5)).toEqual([0]);
  });
});

describe('combineRounds', () => {
  it('takes the mean of the rates, the closed-loop latency at that rate and the highest p99', () => {
    const row = combineRounds(64, [
      { perSecond: 1_000, mean: 64, p99: 30 },
      { perSecond: 3_000, mean: 64 / 3, p99: 90 },
    ]);
    expect(row).toEqual({ perSecond: 2_000, mean: 32, p99: 90 });
  });

  it('gives one round back as it came', () => {
    expect(combineRounds(8, [{ perSecond: 4_000, mean: 2, p99: 5 }])).toEqual({ perSecond: 4_000, mean: 2, p99: 5 });
  });

  it('refuses a row of no rounds', () => {
    expect(() => combineRounds(1, [])).toThrow('a row needs one round at least');
  });
});
