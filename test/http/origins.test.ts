/**
 * The rules behind browser safety, one by one: which Host names are loopback, which
 * origins may call under each auth mode, how --allow-origin and --public-url are
 * checked, which bindings are refused without authentication, and which public URLs and
 * OAuth setups are refused beyond loopback.
 */

import { describe, expect, it } from 'vitest';
import {
  assertSafeBinding,
  assertSafePublicUrl,
  isAllowedHost,
  isLoopbackOrigin,
  originPolicy,
  parseAllowedOrigin,
  parsePublicUrl,
} from '../../src/http/origins.js';
import { EngramError } from '../../src/memory/model/errors.js';

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

describe('isAllowedHost with a public URL', () => {
  const publicUrl = new URL('https://memory.example.com');
  it.each(['memory.example.com', 'Memory.Example.com', 'memory.example.com:443', 'localhost:8787', '127.0.0.1'])(
    'accepts %s',
    (host) => expect(isAllowedHost(host, publicUrl)).toBe(true),
  );
  it.each(['memory.example.com:8443', 'evil.example', 'memory.example.com.evil.example', 'x@memory.example.com'])(
    'refuses %s',
    (host) => expect(isAllowedHost(host, publicUrl)).toBe(false),
  );
  it('takes the port of a public URL that names one', () => {
    const withPort = new URL('http://localhost:9000');
    expect(isAllowedHost('localhost:9000', withPort)).toBe(true);
    expect(isAllowedHost('tunnel.example:9000', new URL('https://tunnel.example:9000'))).toBe(true);
    expect(isAllowedHost('tunnel.example', new URL('https://tunnel.example:9000'))).toBe(false);
  });
});

describe('parsePublicUrl', () => {
  it.each([
    ['https://memory.example.com', 'https://memory.example.com'],
    ['https://memory.example.com/', 'https://memory.example.com'],
    ['HTTPS://Memory.Example.com:443/', 'https://memory.example.com'],
    ['https://memory.example.com:8443', 'https://memory.example.com:8443'],
    ['http://127.0.0.1:8787/', 'http://127.0.0.1:8787'],
  ])('reads %s as %s', (value, origin) => {
    const url = parsePublicUrl(value);
    expect(url.origin).toBe(origin);
    expect(url.href).toBe(`${origin}/`);
  });

  it.each([
    'memory.example.com',
    'ftp://memory.example.com',
    'https://memory.example.com/engram',
    'https://memory.example.com/?x=1',
    'https://memory.example.com/?',
    'https://memory.example.com/#top',
    'https://user:pass@memory.example.com',
    '',
  ])('refuses %s, saying what fits', (value) => {
    expect(() => parsePublicUrl(value)).toThrow(/is not an origin: .* for example --public-url https:\/\//);
  });
});

describe('assertSafePublicUrl', () => {
  const https = new URL('https://memory.example.com');
  const http = new URL('http://memory.example.com');

  it('accepts an https public URL, one on this computer, or none, for a loopback server', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      for (const auth of ['none', 'token', 'oauth'] as const) {
        const local = ['http://127.0.0.1:8787', 'http://localhost:8787', 'http://[::1]:8787'].map(
          (url) => new URL(url),
        );
        for (const url of [undefined, https, ...local]) {
          expect(() => assertSafePublicUrl(host, auth, url)).not.toThrow();
        }
      }
    }
  });

  it('refuses an http:// public URL beyond loopback, whatever the auth', () => {
    for (const auth of ['token', 'oauth'] as const) {
      expect(() => assertSafePublicUrl('0.0.0.0', auth, http)).toThrow(
        /^refusing --public-url http:\/\/memory\.example\.com on 0\.0\.0\.0: an http:\/\/ public URL is accepted only for a server on loopback/,
      );
    }
  });

  it('refuses an http:// public URL off this computer for a loopback server too (a proxy or tunnel in front), saying how to give https', () => {
    for (const auth of ['none', 'token', 'oauth'] as const) {
      for (const url of [http, new URL('http://192.168.1.20:8787'), new URL('http://engram.trycloudflare.com')]) {
        expect(() => assertSafePublicUrl('127.0.0.1', auth, url)).toThrow(
          new RegExp(
            `^refusing --public-url ${url.origin.replace(/[./]/g, '\\$&')} on 127\\.0\\.0\\.1: an http:// public URL is accepted ` +
              'only for a server on loopback \\(--host 127\\.0\\.0\\.1\\) reached on this computer .*Give the https:// URL ' +
              'clients reach, with TLS put in front: a reverse proxy .*a tunnel .*--tls-cert FILE --tls-key FILE\\.$',
          ),
        );
      }
    }
  });

  it('refuses a loopback http:// public URL for a server beyond loopback', () => {
    expect(() => assertSafePublicUrl('0.0.0.0', 'token', new URL('http://127.0.0.1:8787'))).toThrow(
      /^refusing --public-url http:\/\/127\.0\.0\.1:8787 on 0\.0\.0\.0: /,
    );
  });

  it('refuses OAuth beyond loopback without a public URL, naming what to pass', () => {
    let error: unknown;
    try {
      assertSafePublicUrl('192.168.1.20', 'oauth', undefined);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(EngramError);
    expect((error as EngramError).message).toMatch(
      /^refusing to serve --auth oauth on 192\.168\.1\.20 without an https public URL: .*Pass --public-url https:\/\/YOUR-HOST/,
    );
  });

  it('accepts OAuth beyond loopback with an https public URL, and tokens without one', () => {
    expect(() => assertSafePublicUrl('0.0.0.0', 'oauth', https)).not.toThrow();
    expect(() => assertSafePublicUrl('0.0.0.0', 'token', undefined)).not.toThrow();
    expect(() => assertSafePublicUrl('0.0.0.0', 'token', https)).not.toThrow();
  });
});
