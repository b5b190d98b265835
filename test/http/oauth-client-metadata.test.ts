/**
 * The client metadata document fetch and its SSRF guards: a document served over HTTPS
 * (test CA) comes back as sent; every refusal is an `invalid_client` OAuthError naming
 * why — not https, private addresses (however spelled or resolved, and before any
 * connection), redirects, non-200, not JSON, too big (declared or streamed), too slow —
 * in words that name no resolved address, port or system error (those go to the log, as
 * does the stack of a failure no guard foresaw), and the connection goes to the address
 * that was checked.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  type ClientMetadataFetcherOptions,
  createClientMetadataFetcher,
  type ResolvedAddress,
} from '../../src/access/oauth/http/client-metadata.js';
import { isPublicAddress } from '../../src/access/oauth/http/public-address.js';
import { OAuthError } from '../../src/access/oauth/types.js';
import { startHttpsServer, testCertificates } from '../helpers/tls.js';

const DOCUMENT = {
  client_id: 'https://client.engram.test/oauth/client.json',
  client_name: 'Test client',
  redirect_uris: ['http://127.0.0.1/callback'],
  extra: { kept: [1, 'two', null] },
};

interface Site {
  readonly origin: string;
  readonly port: number;
  /** Paths requested, in order. */
  readonly requests: string[];
}

/** An HTTPS server answering each path with its handler (404 otherwise), counting the requests. */
async function site(routes: Record<string, (res: ServerResponse, req: IncomingMessage) => void>): Promise<Site> {
  const requests: string[] = [];
  const server = await startHttpsServer((req, res) => {
    requests.push(req.url ?? '');
    const route = routes[req.url ?? ''];
    if (route) route(res, req);
    else {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end('{"error":"not found"}');
    }
  });
  return { origin: server.origin, port: server.port, requests };
}

function json(body: unknown) {
  return (res: ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };
}

/** A fetcher that trusts the test CA and may reach 127.0.0.1 (the test server), unless told otherwise. */
function fetcher(options: ClientMetadataFetcherOptions = {}) {
  return createClientMetadataFetcher({ ca: testCertificates().ca, allowPrivateAddresses: true, ...options });
}

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OAuthError);
  expect((error as OAuthError).error).toBe('invalid_client');
  return error as OAuthError;
}

/** How a refusal words a host that is not found or not public, alike. */
const NOT_PUBLIC = 'was not found or is not on the public internet';

const resolvesTo =
  (...addresses: string[]) =>
  async (): Promise<ResolvedAddress[]> =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('createClientMetadataFetcher: a good document', () => {
  it('returns the document exactly as served, every field kept', async () => {
    const { origin } = await site({ '/oauth/client.json': json(DOCUMENT) });
    await expect(fetcher()(new URL(`${origin}/oauth/client.json`))).resolves.toStrictEqual(DOCUMENT);
  });

  it('connects to the address it checked, not to what the name would resolve to later', async () => {
    const { port, requests } = await site({ '/client.json': json(DOCUMENT) });
    const asked: string[] = [];
    const fetch = fetcher({
      lookup: async (hostname) => {
        asked.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    // No resolver knows client.engram.test: the request reached the test server only through the checked address.
    await expect(fetch(new URL(`https://client.engram.test:${port}/client.json`))).resolves.toStrictEqual(DOCUMENT);
    expect(asked).toEqual(['client.engram.test']);
    expect(requests).toEqual(['/client.json']);
  });
});

describe('createClientMetadataFetcher: the URL', () => {
  it.each([
    ['http://client.example/c.json', 'not an https URL'],
    ['https://client.example', 'must have a path'],
    ['https://client.example/', 'must have a path'],
    ['https://client.example/c.json#x', 'fragment'],
    ['https://client.example/c.json#', 'fragment'],
    ['https://user:secret@client.example/c.json', 'credentials'],
  ])('refuses %s before resolving it', async (url, reason) => {
    let looked = false;
    const fetch = createClientMetadataFetcher({
      lookup: async () => {
        looked = true;
        return [{ address: '93.184.215.14', family: 4 }];
      },
    });
    const error = await refusal(fetch(new URL(url)));
    expect(error.description).toContain(reason);
    expect(looked).toBe(false);
  });
});

describe('createClientMetadataFetcher: private addresses', () => {
  it.each([
    ['127.0.0.1'],
    ['127.8.9.10'],
    ['::1'],
    ['10.1.2.3'],
    ['172.16.0.1'],
    ['192.168.1.20'],
    ['169.254.169.254'],
    ['100.64.0.1'],
    ['0.0.0.0'],
    ['::'],
    ['fd00::1'],
    ['fe80::1'],
    ['224.0.0.1'],
    ['::ffff:127.0.0.1'],
    ['::ffff:a9fe:a9fe'],
  ])('refuses a host that resolves to %s, by default', async (address) => {
    const fetch = createClientMetadataFetcher({ lookup: resolvesTo(address) });
    const error = await refusal(fetch(new URL('https://client.example/c.json')));
    expect(error.description).toContain(NOT_PUBLIC);
    expect(error.description).not.toContain(address);
  });

  it('refuses when any one of the addresses is private, even if the first is public; the address only in the log', async () => {
    const log: string[] = [];
    const fetch = createClientMetadataFetcher({
      lookup: resolvesTo('93.184.215.14', '10.0.0.7'),
      log: (line) => log.push(line),
    });
    const error = await refusal(fetch(new URL('https://client.example/c.json')));
    expect(error.description).toBe(
      'client metadata document https://client.example/c.json: its host "client.example" was not found or is not on ' +
        'the public internet (documents are never fetched from loopback, private or link-local addresses)',
    );
    expect(log).toEqual([
      'client metadata document https://client.example/c.json: refused, client.example resolves to the non-public address 10.0.0.7',
    ]);
  });

  it('refuses an address written in the URL itself, without connecting', async () => {
    const { port, requests } = await site({ '/c.json': json(DOCUMENT) });
    const fetch = createClientMetadataFetcher({ ca: testCertificates().ca });
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '127.1']) {
      const error = await refusal(fetch(new URL(`https://${host}:${port}/c.json`)));
      expect(error.description).toContain(NOT_PUBLIC);
    }
    expect(requests).toEqual([]);
  });

  it('words a host that is not found as one that is not public, so that the answer maps no network', async () => {
    const log: string[] = [];
    const fetch = createClientMetadataFetcher({
      lookup: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
      },
      log: (line) => log.push(line),
    });
    const error = await refusal(fetch(new URL('https://nowhere.example/c.json')));
    expect(error.description).toContain(`its host "nowhere.example" ${NOT_PUBLIC}`);
    expect(error.description).not.toContain('ENOTFOUND');
    expect(log.join('\n')).toContain('getaddrinfo ENOTFOUND nowhere.example');
  });

  it('says no address, port or system error when the connection fails; those go to the log', async () => {
    const closed = await startHttpsServer((_req, res) => res.end());
    await closed.close();
    const log: string[] = [];
    const fetch = createClientMetadataFetcher({
      lookup: resolvesTo('127.0.0.1'),
      allowPrivateAddresses: true,
      log: (line) => log.push(line),
    });
    const error = await refusal(fetch(new URL(`https://client.example:${closed.port}/c.json`)));
    expect(error.description).toBe(
      `client metadata document https://client.example:${closed.port}/c.json: cannot be fetched: the connection to its server failed`,
    );
    expect(log.join('\n')).toMatch(/from 127\.0\.0\.1 failed: .*ECONNREFUSED/);
  });

  it('logs a failure no guard foresaw (a bug) with its stack, and refuses in words of its own', async () => {
    const log: string[] = [];
    const fetch = createClientMetadataFetcher({
      // A resolver that answers nothing usable: reading its answer fails in the fetcher itself.
      lookup: async () => null as never,
      log: (line) => log.push(line),
    });
    const error = await refusal(fetch(new URL('https://client.example/c.json')));
    expect(error.description).toBe(
      'client metadata document https://client.example/c.json: cannot be fetched: this server failed while ' +
        'fetching it (its log says why)',
    );
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(
      /^client metadata document https:\/\/client\.example\/c\.json: the fetch failed unexpectedly: TypeError: .*null/,
    );
    expect(log[0]).toContain('client-metadata.ts');
  });
});

describe('isPublicAddress', () => {
  it('accepts public addresses of both families and refuses what is not an address', () => {
    expect(isPublicAddress('93.184.215.14')).toBe(true);
    expect(isPublicAddress('2606:4700::1111')).toBe(true);
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
    expect(isPublicAddress('64:ff9b::8.8.8.8')).toBe(true);
    expect(isPublicAddress('64:ff9b::10.0.0.1')).toBe(false);
    expect(isPublicAddress('64:ff9b::1')).toBe(false);
    expect(isPublicAddress('64:ff9b::')).toBe(false);
    expect(isPublicAddress('::ffff:0:0')).toBe(false);
    expect(isPublicAddress('::ffff:c0a8:0114')).toBe(false);
    expect(isPublicAddress('fe80::1%eth0')).toBe(false);
    expect(isPublicAddress('example.com')).toBe(false);
  });
});

describe('createClientMetadataFetcher: the answer', () => {
  it('refuses a redirect and does not follow it', async () => {
    const { origin, requests } = await site({
      '/moved.json': (res) => {
        res.writeHead(302, { Location: '/c.json' });
        res.end();
      },
      '/c.json': json(DOCUMENT),
    });
    const error = await refusal(fetcher()(new URL(`${origin}/moved.json`)));
    expect(error.description).toContain('HTTP 302');
    expect(error.description).toContain('redirects are not followed');
    expect(requests).toEqual(['/moved.json']);
  });

  it('refuses an answer other than 200', async () => {
    const { origin } = await site({});
    const error = await refusal(fetcher()(new URL(`${origin}/missing.json`)));
    expect(error.description).toContain('HTTP 404');
  });

  it('refuses a document that is not served as JSON', async () => {
    const { origin } = await site({
      '/c.html': (res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end(JSON.stringify(DOCUMENT));
      },
    });
    const error = await refusal(fetcher()(new URL(`${origin}/c.html`)));
    expect(error.description).toContain('not JSON (Content-Type "text/html")');
  });

  it.each([
    ['{"client_id": ', 'not JSON'],
    ['[1, 2]', 'not a JSON object'],
    ['"text"', 'not a JSON object'],
  ])('refuses the body %s', async (body, reason) => {
    const { origin } = await site({
      '/c.json': (res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(body);
      },
    });
    const error = await refusal(fetcher()(new URL(`${origin}/c.json`)));
    expect(error.description).toContain(reason);
  });

  it('refuses a body that is not UTF-8', async () => {
    const { origin } = await site({
      '/c.json': (res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
      },
    });
    const error = await refusal(fetcher()(new URL(`${origin}/c.json`)));
    expect(error.description).toContain('not JSON');
  });
});

describe('createClientMetadataFetcher: size and time', () => {
  it('refuses a body declared too big before reading it', async () => {
    const { origin } = await site({
      '/big.json': (res) => {
        // The headers promise a megabyte and nothing follows: only the declaration can end the fetch.
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': 1_000_000 });
        res.flushHeaders();
      },
    });
    const error = await refusal(fetcher({ timeoutMs: 30_000 })(new URL(`${origin}/big.json`)));
    expect(error.description).toContain('too big');
  });

  it('stops reading a body that grows past the cap without declaring its size', async () => {
    const { origin } = await site({
      '/endless.json': (res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"padding": "');
        // Streams forever unless the client hangs up; a fetch that read it all would never end.
        const more = () => {
          if (!res.destroyed) res.write('x'.repeat(1024), () => setImmediate(more));
        };
        more();
      },
    });
    const error = await refusal(fetcher({ timeoutMs: 30_000 })(new URL(`${origin}/endless.json`)));
    expect(error.description).toContain('too big');
  });

  it('refuses a body one byte over the cap and accepts one at the cap', async () => {
    const at = JSON.stringify({ ...DOCUMENT, pad: '' });
    const room = 300 - Buffer.byteLength(at);
    const exact = JSON.stringify({ ...DOCUMENT, pad: 'p'.repeat(room) });
    const over = JSON.stringify({ ...DOCUMENT, pad: 'p'.repeat(room + 1) });
    const chunked = (body: string) => (res: ServerResponse) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(body.slice(0, 10));
      res.end(body.slice(10));
    };
    const { origin } = await site({ '/exact.json': chunked(exact), '/over.json': chunked(over) });
    const fetch = fetcher({ maxBytes: 300 });
    await expect(fetch(new URL(`${origin}/exact.json`))).resolves.toStrictEqual(JSON.parse(exact));
    const error = await refusal(fetch(new URL(`${origin}/over.json`)));
    expect(error.description).toContain('too big');
  });

  it('gives up on a server that never answers', async () => {
    const { origin } = await site({ '/silent.json': () => {} });
    const error = await refusal(fetcher({ timeoutMs: 200 })(new URL(`${origin}/silent.json`)));
    expect(error.description).toContain('timed out');
  });

  it('gives up on a server that stops in the middle of the body', async () => {
    const { origin } = await site({
      '/stalls.json': (res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"client_id": ');
      },
    });
    const error = await refusal(fetcher({ timeoutMs: 200 })(new URL(`${origin}/stalls.json`)));
    expect(error.description).toContain('timed out');
  });

  it('counts the time spent resolving the host', async () => {
    const fetch = createClientMetadataFetcher({ timeoutMs: 100, lookup: () => new Promise(() => {}) });
    const error = await refusal(fetch(new URL('https://slow-dns.example/c.json')));
    expect(error.description).toContain('timed out');
  });

  it('refuses a server whose certificate it does not trust', async () => {
    const { origin, requests } = await site({ '/c.json': json(DOCUMENT) });
    const fetch = createClientMetadataFetcher({ allowPrivateAddresses: true });
    const error = await refusal(fetch(new URL(`${origin}/c.json`)));
    expect(error.description).toBe(
      `client metadata document ${origin}/c.json: cannot be fetched: its server’s TLS certificate was not accepted ` +
        '(it must be valid for the host and signed by a public certificate authority)',
    );
    expect(requests).toEqual([]);
  });
});
