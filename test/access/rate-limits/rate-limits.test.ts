/**
 * Counting in the server's memory, on a fake clock (vitest's, Date only: the library
 * reads Date.now): a limit refuses past its points and says when its window ends; a new
 * window counts from zero; keys count apart, limits count apart; and however many keys
 * callers send, the counters remember a bounded number of them.
 */

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rateLimitHeaders } from '../../../src/access/rate-limits/answers.js';
import { MemoryRateCounters } from '../../../src/access/rate-limits/memory-counters.js';
import { RateLimits } from '../../../src/access/rate-limits/rate-limits.js';
import { resolveRateLimits } from '../../../src/access/rate-limits/rules.js';

const START = Date.UTC(2026, 0, 1);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(START);
});
afterEach(() => {
  vi.useRealTimers();
});

async function limits(setting: Parameters<typeof resolveRateLimits>[1], counters = new MemoryRateCounters()) {
  return RateLimits.create(counters, resolveRateLimits('token', setting));
}

describe('a limit', () => {
  it('lets its points through, refuses the next with the wait until its window ends, then counts anew', async () => {
    const limited = await limits([[{ name: 'mcp', rate: { points: 3, windowSeconds: 60 } }]]);
    for (let i = 0; i < 3; i++) expect(await limited.refusal([['mcp', 'token a']])).toBeUndefined();
    vi.setSystemTime(START + 20_000);
    const refused = await limited.refusal([['mcp', 'token a']]);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 40 });
    expect(refusedHeaders(refused)).toEqual({
      'Retry-After': '40',
      'RateLimit-Policy': '"mcp";q=3;w=60',
      RateLimit: '"mcp";r=0;t=40',
    });
    vi.setSystemTime(START + 59_999);
    expect(await limited.refusal([['mcp', 'token a']])).toMatchObject({ resetSeconds: 1 });
    vi.setSystemTime(START + 60_000);
    expect(await limited.refusal([['mcp', 'token a']])).toBeUndefined();
  });

  it('counts each key apart, and each limit apart', async () => {
    const limited = await limits([
      [
        { name: 'auth', rate: { points: 1, windowSeconds: 60 } },
        { name: 'sign-in', rate: { points: 1, windowSeconds: 60 } },
      ],
    ]);
    expect(await limited.refusal([['auth', '192.0.2.1']])).toBeUndefined();
    expect(await limited.refusal([['auth', '192.0.2.1']])).toMatchObject({ rule: { name: 'auth' } });
    expect(await limited.refusal([['auth', '192.0.2.2']])).toBeUndefined();
    // The same subject under another limit is another count.
    expect(await limited.refusal([['sign-in', '192.0.2.1']])).toBeUndefined();
    expect(await limited.refusal([['sign-in', 'alice']])).toBeUndefined();
    expect(await limited.refusal([['sign-in', 'alice']])).toMatchObject({ rule: { name: 'sign-in' } });
  });

  it('answers the longest wait when two limits refuse, and counts every check', async () => {
    const limited = await limits([
      [
        { name: 'auth', rate: { points: 1, windowSeconds: 60 } },
        { name: 'sign-in', rate: { points: 1, windowSeconds: 3600 } },
      ],
    ]);
    expect(
      await limited.refusal([
        ['auth', '192.0.2.1'],
        ['sign-in', 'alice'],
      ]),
    ).toBeUndefined();
    const both = await limited.refusal([
      ['auth', '192.0.2.1'],
      ['sign-in', 'alice'],
    ]);
    expect(both).toMatchObject({ rule: { name: 'sign-in' }, resetSeconds: 3600 });
  });

  it('keeps the count of an attempt only when it fails as told; a window ended meanwhile is not given back into', async () => {
    const limited = await limits([[{ name: 'sign-in', rate: { points: 2, windowSeconds: 60 } }]]);
    const wrong = new Error('wrong password');
    const signIn = async (outcome: 'ok' | 'wrong' | 'down') => {
      const refused = await limited.refusal([['sign-in', 'alice']]);
      if (refused !== undefined) return 'refused';
      const attempt = async () => {
        if (outcome === 'ok') return 'ok';
        throw outcome === 'wrong' ? wrong : new Error('store down');
      };
      return limited.countingFailures('sign-in', 'alice', attempt, (error) => error === wrong).catch(() => 'failed');
    };
    for (let i = 0; i < 5; i++) expect(await signIn('ok')).toBe('ok');
    expect(await signIn('down')).toBe('failed');
    expect(await signIn('wrong')).toBe('failed');
    expect(await signIn('ok')).toBe('ok');
    expect(await signIn('wrong')).toBe('failed');
    expect(await signIn('ok')).toBe('refused');
    // Counted at 119 s, given back at 120 s once the next window began: that window keeps its full count.
    vi.setSystemTime(START + 60_000);
    expect(await signIn('wrong')).toBe('failed');
    vi.setSystemTime(START + 119_000);
    await limited.refusal([['sign-in', 'alice']]);
    vi.setSystemTime(START + 120_000);
    await limited.countingFailures(
      'sign-in',
      'alice',
      async () => 'ok',
      () => false,
    );
    expect(await signIn('wrong')).toBe('failed');
    expect(await signIn('wrong')).toBe('failed');
    expect(await signIn('ok')).toBe('refused');
  });

  it('counts nothing when it is off', async () => {
    const limited = await limits([[{ all: false }]]);
    expect(limited.has('mcp')).toBe(false);
    for (let i = 0; i < 5000; i++) expect(await limited.refusal([['mcp', 'token a']])).toBeUndefined();
  });
});

describe('the counters in memory', () => {
  it('remember at most their cap of keys, forgetting the oldest window first', async () => {
    const limited = await limits(
      [[{ name: 'auth', rate: { points: 1, windowSeconds: 60 } }]],
      new MemoryRateCounters(3),
    );
    for (const address of ['a', 'b', 'c']) await limited.refusal([['auth', address]]);
    expect(await limited.refusal([['auth', 'a']])).toBeDefined();
    // A fourth and a fifth key push out the two oldest windows ('a' and 'b'): they count anew.
    await limited.refusal([['auth', 'd']]);
    await limited.refusal([['auth', 'e']]);
    expect(await limited.refusal([['auth', 'b']])).toBeUndefined();
    expect(await limited.refusal([['auth', 'e']])).toBeDefined();
  });

  it('stay bounded whatever a flood of keys sends', async () => {
    const counters = new MemoryRateCounters(1000);
    const limited = await limits([[{ name: 'auth', rate: { points: 5, windowSeconds: 3600 } }]], counters);
    for (let i = 0; i < 20_000; i++) await limited.refusal([['auth', `198.51.100.${i}`]]);
    expect(rememberedKeys(counters)).toEqual({ ours: 1000, library: 1000 });
  });
});

function refusedHeaders(verdict: Awaited<ReturnType<RateLimits['refusal']>>) {
  expect(verdict).toBeDefined();
  return rateLimitHeaders(verdict!);
}

interface Internals {
  readonly keys: Map<
    string,
    { readonly limiter: { readonly _memoryStorage: { readonly _storage: Map<string, unknown> } } }
  >;
}

/** How many keys the counters hold, in their own map and in the library's storage (read from inside both). */
function rememberedKeys(counters: MemoryRateCounters): { ours: number; library: number } {
  const { keys } = counters as unknown as Internals;
  const limiters = new Set([...keys.values()].map((remembered) => remembered.limiter));
  const library = [...limiters].reduce((sum, limiter) => sum + limiter._memoryStorage._storage.size, 0);
  return { ours: keys.size, library };
}
