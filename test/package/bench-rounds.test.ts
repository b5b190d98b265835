/**
 * The HTTP benchmark measures each N in rounds (bench/http.ts): a row's figure is the
 * median of its rounds and the range beside it is theirs (bench/stats.ts `spread`); and a
 * load runs for whole seconds only (bench/load.ts), since autocannon stops on a
 * one-second tick and a shorter run would last longer than its figures say.
 */

import { expect, it } from 'vitest';
import { runLoad } from '../../bench/load.js';
import { roundRatios, spread } from '../../bench/stats.js';

it('takes the median and the range of a row’s rounds, whatever their order', () => {
  expect(spread([0.61, 0.72, 0.67, 0.43, 0.7])).toEqual({ median: 0.67, low: 0.43, high: 0.72 });
  expect(spread([3])).toEqual({ median: 3, low: 3, high: 3 });
  // Two rounds (a quick run): the mean of the middle two, as the accelerators' blocks always had it.
  expect(spread([2, 1])).toEqual({ median: 1.5, low: 1, high: 2 });
  expect(Number.isNaN(spread([]).median)).toBe(true);
});

it('takes a ratio round by round, each round over the same round of the other', () => {
  expect(roundRatios([10, 30, 12], [20, 20, 12])).toEqual({ median: 1, low: 0.5, high: 1.5 });
});

it('refuses a load or a warm-up that is not whole seconds, before starting anything', () => {
  const target = { label: 'nothing', port: 1, path: '/mcp', headers: {}, bodies: ['{}'], expect: '' };
  expect(() => runLoad(target, 1, 500, 1_000)).toThrow(/a load of 500 ms: a load runs for whole seconds/);
  expect(() => runLoad(target, 1, 1_000, 300)).toThrow(/a warm-up of 300 ms/);
  expect(() => runLoad(target, 1, 1_000, -1_000)).toThrow(/a warm-up of -1000 ms/);
  expect(() => runLoad(target, 1, 0, 1_000)).toThrow(/a load of 0 ms measures nothing/);
});
