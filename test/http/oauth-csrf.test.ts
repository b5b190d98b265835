/**
 * The consent form's cookies and CSRF token on their own: a cookie sent twice or
 * malformed reads as absent; Set-Cookie carries HttpOnly, SameSite and Secure as asked;
 * a token is issued once per browser and kept, and a form counts only with the cookie's
 * own token.
 */

import { describe, expect, it } from 'vitest';
import { readCookie, setCookie } from '../../src/access/oauth/http/cookies.js';
import { createCsrfGuard } from '../../src/access/oauth/http/csrf.js';

describe('readCookie', () => {
  it.each([
    ['alone', 'engram_session=abc', 'abc'],
    ['among others', 'a=1; engram_session=abc;b=2', 'abc'],
    ['absent', 'a=1; engram_session_old=abc', undefined],
    ['no header', undefined, undefined],
    ['sent twice (one may be planted)', 'engram_session=abc; engram_session=def', undefined],
    ['with a quote or a space inside', 'engram_session=a"b', undefined],
  ])('%s', (_, header, value) => {
    expect(readCookie(header, 'engram_session')).toBe(value);
  });
});

describe('setCookie', () => {
  it('is HttpOnly on every path, with SameSite, and Secure and Max-Age when asked', () => {
    expect(setCookie('n', 'v', { secure: false, sameSite: 'Strict' })).toBe('n=v; Path=/; HttpOnly; SameSite=Strict');
    expect(setCookie('n', 'v', { secure: true, sameSite: 'Lax', maxAgeSeconds: 90.7 })).toBe(
      'n=v; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=90',
    );
  });
});

describe('the CSRF guard', () => {
  const guard = createCsrfGuard({ secure: false });

  it('issues a token with its cookie once, then keeps the browser’s', () => {
    const first = guard.issue(undefined);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.cookie).toBe(`engram_csrf=${first.token}; Path=/; HttpOnly; SameSite=Strict`);
    expect(guard.issue(`engram_csrf=${first.token}`)).toEqual({ token: first.token, cookie: undefined });
    expect(guard.issue('engram_csrf=short').token).not.toBe('short');
  });

  it('accepts a form only with the token its cookie holds', () => {
    const { token } = guard.issue(undefined);
    const other = guard.issue(undefined).token;
    expect(guard.verify(`engram_csrf=${token}`, token)).toBe(true);
    expect(guard.verify(`engram_csrf=${token}`, other)).toBe(false);
    expect(guard.verify(`engram_csrf=${token}`, undefined)).toBe(false);
    expect(guard.verify(`engram_csrf=${token}`, `${token}x`)).toBe(false);
    expect(guard.verify(undefined, token)).toBe(false);
    expect(guard.verify(`engram_csrf=${token}; engram_csrf=${token}`, token)).toBe(false);
  });

  it('names its cookie __Host- and makes it Secure over https, where a sibling host cannot set it', () => {
    const secure = createCsrfGuard({ secure: true });
    const { token, cookie } = secure.issue(undefined);
    expect(cookie).toBe(`__Host-engram_csrf=${token}; Path=/; HttpOnly; SameSite=Strict; Secure`);
    expect(secure.verify(`engram_csrf=${token}`, token)).toBe(false);
    expect(secure.verify(`__Host-engram_csrf=${token}`, token)).toBe(true);
  });
});
