/**
 * The rules behind browser safety, one by one: which Host names are loopback, which
 * origins may call under each auth mode, how --allow-origin is checked, and which
 * bindings are refused without authentication.
 */

import { describe, expect, it } from 'vitest';
import { EngramError } from '../../src/core/errors.js';
import {
  assertSafeBinding,
  isAllowedHost,
  isLoopbackOrigin,
  originPolicy,
  parseAllowedOrigin,
} from '../../src/http/origins.js';

describe('isAllowedHost (loopback Host names only)', () => {
  it.each([
    'localhost',
    'localhost:8787',
    'LOCALHOST:1',
    '127.0.0.1',
    '127.0.0.1:8787',
    '127.1.2.3:80',
    '[::1]',
    '[::1]:8787',
  ])('accepts %s', (host) => expect(isAllowedHost(host)).toBe(true));
  it.each([
    undefined,
    '',
    'evil.example',
    'localhost.evil.example',
    '127.0.0.1.nip.io',
    '0.0.0.0',
    '192.168.1.2:8787',
    '[::2]',
    'a b',
    'localhost\\evil.example',
    'localhost/x',
    'evil.example@localhost',
    'localhost:',
    'localhost:99999',
    '127.1',
    '127.0.0.1.',
  ])('refuses %s', (host) => expect(isAllowedHost(host)).toBe(false));
});

describe('isLoopbackOrigin', () => {
  it.each(['http://localhost:8080', 'http://localhost', 'http://127.0.0.1:8080', 'http://[::1]:5173'])(
    'accepts %s',
    (origin) => expect(isLoopbackOrigin(origin)).toBe(true),
  );
  it.each([
    'https://localhost:8080',
    'http://localhost:8080/',
    'http://localhost.evil.example',
    'http://127.0.0.2:8080',
    'null',
    'file://',
    'https://evil.example',
  ])('refuses %s', (origin) => expect(isLoopbackOrigin(origin)).toBe(false));
});

describe('originPolicy', () => {
  it('without auth, allows loopback and listed origins only', () => {
    const allows = originPolicy('none', ['https://chat.example']);
    expect(allows('http://127.0.0.1:8080')).toBe(true);
    expect(allows('https://chat.example')).toBe(true);
    expect(allows('https://evil.example')).toBe(false);
  });

  it('with tokens, allows any origin unless some are listed', () => {
    expect(originPolicy('token', [])('https://evil.example')).toBe(true);
    const narrowed = originPolicy('token', ['https://chat.example']);
    expect(narrowed('https://chat.example')).toBe(true);
    expect(narrowed('http://127.0.0.1:8080')).toBe(false);
  });
});

describe('parseAllowedOrigin', () => {
  it('accepts an origin, with or without a final slash', () => {
    expect(parseAllowedOrigin('http://192.168.1.20:8080')).toBe('http://192.168.1.20:8080');
    expect(parseAllowedOrigin('https://chat.example/')).toBe('https://chat.example');
  });

  it.each(['*', 'chat.example', 'https://chat.example/path', 'ftp://chat.example', ''])(
    'refuses %j, saying what fits',
    (value) => {
      expect(() => parseAllowedOrigin(value)).toThrow(
        new EngramError(
          'INVALID_ARGUMENT',
          `--allow-origin ${JSON.stringify(value)} is not an origin: give the scheme, host and port of the page ` +
            'that calls Engram, with no path, for example --allow-origin http://192.168.1.20:8080',
        ),
      );
    },
  );
});

describe('assertSafeBinding', () => {
  it.each(['127.0.0.1', 'localhost', '::1'])('allows %s without auth', (host) => {
    expect(() => assertSafeBinding(host, 'none')).not.toThrow();
  });

  it.each(['0.0.0.0', '::', '192.168.1.20'])('refuses %s without auth, and allows it with tokens', (host) => {
    expect(() => assertSafeBinding(host, 'none')).toThrow(
      `refusing to serve on ${host} without authentication: anyone who can reach it could read and change your memory. ` +
        'Either keep the default --host 127.0.0.1, or start with --auth token and create tokens with ' +
        'engram token create --user NAME.',
    );
    expect(() => assertSafeBinding(host, 'token')).not.toThrow();
  });
});
