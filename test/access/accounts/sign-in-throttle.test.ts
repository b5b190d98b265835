/**
 * The sign-in throttle on its own clock: a few failures are free, then each one doubles
 * the wait up to a cap; a quiet spell forgets them; one failure can be taken back; and
 * it remembers a bounded number of keys, the least recently failed dropped first.
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_THROTTLE, SignInThrottle } from '../../../src/access/accounts/sign-in-throttle.js';

const MINUTE = 60_000;

function failTimes(throttle: SignInThrottle, key: string, times: number, at: number): void {
  for (let i = 0; i < times; i++) throttle.fail(key, at);
}

describe('SignInThrottle', () => {
  it('lets 5 failures pass, then waits 1 s, 2 s, 4 s… after each further one, up to 15 minutes', () => {
    const throttle = new SignInThrottle();
    failTimes(throttle, 'user:alice', 4, 0);
    expect(throttle.waitSeconds('user:alice', 0)).toBe(0);
    const waits: number[] = [];
    for (let failures = 5; failures <= 16; failures++) {
      throttle.fail('user:alice', 0);
      waits.push(throttle.waitSeconds('user:alice', 0));
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
  });

  it('counts the wait from the latest failure, in whole seconds rounded up', () => {
    const throttle = new SignInThrottle();
    failTimes(throttle, 'k', 7, 10_000);
    expect(throttle.waitSeconds('k', 10_000)).toBe(4);
    expect(throttle.waitSeconds('k', 12_500)).toBe(2);
    expect(throttle.waitSeconds('k', 13_999)).toBe(1);
    expect(throttle.waitSeconds('k', 14_000)).toBe(0);
  });

  it('keeps keys apart', () => {
    const throttle = new SignInThrottle();
    failTimes(throttle, 'user:alice', 5, 0);
    expect(throttle.waitSeconds('user:alice', 0)).toBe(1);
    expect(throttle.waitSeconds('user:bob', 0)).toBe(0);
    expect(throttle.waitSeconds('address:alice', 0)).toBe(0);
  });

  it('forgets the failures 15 quiet minutes after the wait they earned', () => {
    const throttle = new SignInThrottle();
    failTimes(throttle, 'k', 6, 0);
    expect(throttle.waitSeconds('k', 0)).toBe(2);
    // Still counted just before the quiet spell ends: one more failure waits 4 s.
    throttle.fail('k', 2_000 + 15 * MINUTE - 1);
    expect(throttle.waitSeconds('k', 2_000 + 15 * MINUTE - 1)).toBe(4);
    const quiet = 2_000 + 15 * MINUTE - 1 + 4_000 + 15 * MINUTE;
    throttle.fail('k', quiet);
    expect(throttle.waitSeconds('k', quiet)).toBe(0);
    failTimes(throttle, 'k', 3, quiet);
    expect(throttle.waitSeconds('k', quiet)).toBe(0);
    throttle.fail('k', quiet);
    expect(throttle.waitSeconds('k', quiet)).toBe(1);
  });

  it('takes back one failure with forgive, and all of them with reset', () => {
    const throttle = new SignInThrottle();
    failTimes(throttle, 'k', 6, 0);
    throttle.forgive('k');
    expect(throttle.waitSeconds('k', 0)).toBe(1);
    throttle.forgive('k');
    expect(throttle.waitSeconds('k', 0)).toBe(0);
    throttle.fail('k', 0);
    expect(throttle.waitSeconds('k', 0)).toBe(1);
    throttle.reset('k');
    expect(throttle.waitSeconds('k', 0)).toBe(0);
    failTimes(throttle, 'k', 4, 0);
    expect(throttle.waitSeconds('k', 0)).toBe(0);
    throttle.forgive('unknown');
  });

  it('remembers at most maxKeys keys, dropping the least recently failed', () => {
    const throttle = new SignInThrottle({ ...DEFAULT_THROTTLE, maxKeys: 3 });
    failTimes(throttle, 'a', 5, 0);
    failTimes(throttle, 'b', 5, 0);
    failTimes(throttle, 'c', 5, 0);
    throttle.fail('a', 0);
    throttle.fail('d', 0);
    expect(['a', 'b', 'c', 'd'].map((key) => throttle.waitSeconds(key, 0))).toEqual([2, 0, 1, 0]);
  });

  it('remembers 10,000 keys by default', () => {
    const throttle = new SignInThrottle();
    failTimes(throttle, 'first', 5, 0);
    for (let i = 0; i < 9_999; i++) throttle.fail(`address:${i}`, 0);
    expect(throttle.waitSeconds('first', 0)).toBe(1);
    throttle.fail('address:one-more', 0);
    expect(throttle.waitSeconds('first', 0)).toBe(0);
  });
});
