/**
 * The rate-limit setting (--rate-limit, ENGRAM_RATE_LIMIT, the config's "rateLimit"): how it
 * is written, what a mistake is told, and which limits hold by default for each auth mode.
 */

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RATES,
  formatRate,
  parseRateLimits,
  RateLimitSyntaxError,
  resolveRateLimits,
} from '../../../src/access/rate-limits/rules.js';

function refusal(text: string): string {
  try {
    parseRateLimits(text);
  } catch (error) {
    expect(error).toBeInstanceOf(RateLimitSyntaxError);
    return (error as Error).message;
  }
  throw new Error(`${text} was accepted`);
}

describe('the defaults', () => {
  it('guard the sign-in doors always, and count per token only when the server has tokens', () => {
    for (const auth of ['token', 'oauth'] as const) {
      expect(resolveRateLimits(auth, [])).toEqual(DEFAULT_RATES);
    }
    expect(resolveRateLimits('none', [])).toEqual({
      auth: DEFAULT_RATES.auth,
      'sign-in': DEFAULT_RATES['sign-in'],
      mcp: undefined,
      api: undefined,
    });
  });

  it('leave hundreds of tool calls a minute untouched', () => {
    expect(DEFAULT_RATES.mcp.points / (DEFAULT_RATES.mcp.windowSeconds / 60)).toBeGreaterThanOrEqual(1000);
  });
});

describe('a setting', () => {
  it('turns everything on or off', () => {
    expect(resolveRateLimits('none', [parseRateLimits('on')])).toEqual(DEFAULT_RATES);
    expect(resolveRateLimits('oauth', [parseRateLimits('off')])).toEqual({
      auth: undefined,
      'sign-in': undefined,
      mcp: undefined,
      api: undefined,
    });
  });

  it('changes one limit, leaving the others at their defaults', () => {
    const rules = resolveRateLimits('token', [parseRateLimits('mcp=600/min, api=off,AUTH=10/s,sign-in=100/h')]);
    expect(rules).toEqual({
      auth: { points: 10, windowSeconds: 1 },
      'sign-in': { points: 100, windowSeconds: 3600 },
      mcp: { points: 600, windowSeconds: 60 },
      api: undefined,
    });
  });

  it('is applied in order: the flag over the config file, a later item over an earlier one', () => {
    const config = parseRateLimits('mcp=100/min,api=200/min');
    const flag = parseRateLimits('off,mcp=on');
    expect(resolveRateLimits('none', [config, flag])).toEqual({
      auth: undefined,
      'sign-in': undefined,
      mcp: DEFAULT_RATES.mcp,
      api: undefined,
    });
    expect(resolveRateLimits('none', [parseRateLimits('api=5/s'), []]).api).toEqual({ points: 5, windowSeconds: 1 });
  });

  it('is refused with what was wrong and how to write it', () => {
    expect(refusal('')).toBe(
      'the setting is empty: give on, off, or NAME=RATE pairs separated by commas, NAME one of auth, sign-in, mcp, ' +
        'api and RATE like 600/min (per s, min or h), on (the default number) or off; for example mcp=600/min,api=off.',
    );
    expect(refusal('tools=5/min')).toMatch(
      /^"tools=5\/min" names no limit: the limits are auth, sign-in, mcp, api; give on, off/,
    );
    expect(refusal('mcp')).toMatch(/^mcp needs a rate: mcp=RATE, where give on, off/);
    expect(refusal('mcp=600')).toBe(
      'mcp=600: a rate is a whole number per s, min or h (for example mcp=1200/min), or on, or off.',
    );
    expect(refusal('api=5/day')).toMatch(/^api=5\/day: a rate is a whole number per s, min or h/);
    expect(refusal('auth=0/min')).toBe(
      'auth=0/min: give from 1 to 1,000,000 requests per window (off turns the limit off).',
    );
  });

  it('is written back as people write it', () => {
    expect(formatRate({ points: 600, windowSeconds: 60 })).toBe('600/min');
    expect(formatRate({ points: 5, windowSeconds: 1 })).toBe('5/s');
    expect(formatRate({ points: 100, windowSeconds: 3600 })).toBe('100/h');
  });
});
