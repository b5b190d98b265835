/**
 * How the storage engine's algorithms are driven (src/storage/engine/drive.ts): one
 * generator, run to its end synchronously or by awaiting each step, with a primitive's
 * result handed back where it was asked for and its failure thrown there.
 */

import { describe, expect, it } from 'vitest';
import { get, runAsync, runSync, type Work } from '../../src/storage/engine/drive.js';

/** Two primitives asked in turn, the second given the first's result; a failure is caught at its step. */
function* sumOf(first: () => number | Promise<number>, second: (n: number) => number | Promise<number>): Work<string> {
  const a = yield* get(first());
  try {
    return `sum ${a + (yield* get(second(a)))}`;
  } catch (error) {
    return `caught ${(error as Error).message}`;
  }
}

describe('the storage engine’s drivers', () => {
  it('run a generator to its end synchronously, handing each result back', () => {
    expect(
      runSync(
        sumOf(
          () => 2,
          (n) => n * 10,
        ),
      ),
    ).toBe('sum 22');
  });

  it('refuse a promise in a synchronous run, where no transaction could wait for it', () => {
    expect(() =>
      runSync(
        sumOf(
          () => Promise.resolve(2),
          (n) => n,
        ),
      ),
    ).toThrow(/returned a promise/);
  });

  it('await each step of an asynchronous run, and take values that are already there', async () => {
    expect(
      await runAsync(
        sumOf(
          async () => 2,
          (n) => n * 10,
        ),
      ),
    ).toBe('sum 22');
  });

  it('throw a rejected step into the generator, at that step', async () => {
    expect(
      await runAsync(
        sumOf(
          async () => 2,
          async () => Promise.reject(new Error('gone')),
        ),
      ),
    ).toBe('caught gone');
    await expect(
      runAsync(
        sumOf(
          () => Promise.reject(new Error('first')),
          (n) => n,
        ),
      ),
    ).rejects.toThrow('first');
  });
});
