/**
 * The REST API's refusal statuses and Retry-After: a throttled sign-in is a 429 that says
 * when to try again, from the refusal's own detail; a busy database still says 1 second.
 */

import { describe, expect, it } from 'vitest';
import { retryAfterHeaders, STATUS_BY_CODE } from '../../src/http/api/errors.js';

describe('refusal statuses', () => {
  it('answers too many sign-in attempts with 429 and the seconds left as Retry-After', () => {
    expect(STATUS_BY_CODE.TOO_MANY_ATTEMPTS).toBe(429);
    expect(retryAfterHeaders('TOO_MANY_ATTEMPTS', { reason: 'sign-in-throttled', retryAfterSeconds: 37 })).toEqual({
      'Retry-After': '37',
    });
  });

  it('keeps Retry-After for a busy database, and gives none to refusals that do not pass on their own', () => {
    expect(retryAfterHeaders('STORE_BUSY')).toEqual({ 'Retry-After': '1' });
    expect(retryAfterHeaders('UNAUTHORIZED')).toEqual({});
    expect(retryAfterHeaders('CONFLICT', { reason: 'account-exists', user: 'alice' })).toEqual({});
  });
});
