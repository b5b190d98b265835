/**
 * Fetching a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document,
 * MCP 2025-11-25): the client_id is an HTTPS URL, and the document it names says who the
 * client is. Anyone can make Engram fetch any URL this way, so this fetch is an SSRF door
 * and is guarded: https only, with a path and without credentials or a fragment; the host
 * is resolved once and refused when any of its addresses is not public (public-address.ts),
 * and the connection goes to the address that was checked (a DNS answer that changes
 * between the check and the connection cannot slip through); no redirects; one deadline
 * for the whole fetch; the body capped whatever Content-Length says; only a 200 answer of
 * JSON is accepted. Each refusal is an `invalid_client` OAuthError whose description says
 * why in words of our own, never what the fetch met underneath: no resolved address, no
 * system error text (a certificate's names, an address and port), and the same words for
 * a host that is not found as for one that is not public, so that the refusal cannot be
 * used to map the server's network; those details go to the server's log, as does any
 * failure no guard foresaw (a bug), whose stack is logged before the client is refused in
 * the same words of our own. Nothing is cached here: OAuthClients (access/oauth/clients.ts)
 * caches the clients it checked, and shares one fetch among concurrent requests for the
 * same document.
 */

import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isOAuthError, OAuthError } from '../types.js';
import { isPublicAddress } from './public-address.js';

export interface ResolvedAddress {
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

export interface ClientMetadataFetcherOptions {
  /** Deadline for the whole fetch, DNS included (default 5 s). */
  readonly timeoutMs?: number;
  /** Cap on the document's size in bytes (default 5 KiB, as the draft suggests). */
  readonly maxBytes?: number;
  /** Let the fetch reach loopback and private addresses (tests; a client on the operator's own network). */
  readonly allowPrivateAddresses?: boolean;
  /** Resolves a host name to every address it has (default: the system resolver). */
  readonly lookup?: (hostname: string) => Promise<readonly ResolvedAddress[]>;
  /** Certificate authorities to trust instead of the system's (tests). */
  readonly ca?: string | Buffer | readonly (string | Buffer)[];
  /** Where what the client is not told goes (the resolved address, the system's error); default: nowhere. */
  readonly log?: (line: string) => void;
}

export type ClientMetadataFetcher = (url: URL) => Promise<unknown>;

const DEFAULTS = { timeoutMs: 5_000, maxBytes: 5 * 1024 };

const systemLookup = (hostname: string): Promise<readonly ResolvedAddress[]> =>
  dnsLookup(hostname, { all: true, verbatim: true });

function refuse(url: URL, reason: string): OAuthError {
  return new OAuthError('invalid_client', `client metadata document ${url.href}: ${reason}`);
}

/** The draft's rules for a client_id URL, before anything is resolved or fetched. */
function checkUrl(url: URL): void {
  if (url.protocol !== 'https:') {
    throw refuse(url, 'not an https URL; a client metadata document is fetched over https only');
  }
  if (url.username !== '' || url.password !== '') throw refuse(url, 'the URL must not carry credentials');
  if (url.href.includes('#')) throw refuse(url, 'the URL must not carry a fragment');
  if (url.pathname === '/') throw refuse(url, 'the URL must have a path, such as https://example.com/client.json');
}

/** One refusal for a host not found and a host not public: which of the two it was is for the log only. */
function unreachableHost(url: URL, host: string): OAuthError {
  return refuse(
    url,
    `its host ${JSON.stringify(host)} was not found or is not on the public internet (documents are never fetched from ` +
      'loopback, private or link-local addresses)',
  );
}

/** The host's addresses, every one of them public unless private ones are allowed; the first is the one used. */
async function resolve(
  url: URL,
  lookup: NonNullable<ClientMetadataFetcherOptions['lookup']>,
  allowPrivate: boolean,
  log: (line: string) => void,
): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host);
  let addresses: readonly ResolvedAddress[];
  if (literal !== 0) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await lookup(host);
    } catch (error) {
      log(`client metadata document ${url.href}: resolving ${host} failed: ${errorText(error)}`);
      addresses = [];
    }
  }
  const first = addresses[0];
  if (first === undefined) throw unreachableHost(url, host);
  if (!allowPrivate) {
    const closed = addresses.find(({ address }) => !isPublicAddress(address));
    if (closed !== undefined) {
      log(
        `client metadata document ${url.href}: refused, ${host} resolves to the non-public address ${closed.address}`,
      );
      throw unreachableHost(url, host);
    }
  }
  return first;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function errorStack(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Whether a failed connection failed on the server's TLS certificate (Node's codes for it, and OpenSSL's). */
function isCertificateError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    typeof code === 'string' &&
    (code.startsWith('ERR_TLS_CERT') ||
      code.includes('CERT') ||
      code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
      code === 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY')
  );
}

/** A failed connection in words of our own: the system's message names addresses, ports and certificate names. */
function connectionFailure(url: URL, error: unknown): OAuthError {
  return refuse(
    url,
    isCertificateError(error)
      ? 'cannot be fetched: its server’s TLS certificate was not accepted (it must be valid for the host and ' +
          'signed by a public certificate authority)'
      : 'cannot be fetched: the connection to its server failed',
  );
}

/** Hands the HTTPS request the address already checked, whatever DNS would say now. */
function pinnedLookup({ address, family }: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (error: null, addresses: ResolvedAddress[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** The Content-Type as a message shows it: quoted, and short whatever the server sent. */
function contentType(res: IncomingMessage): string {
  const value = res.headers['content-type'];
  return value === undefined ? 'missing' : JSON.stringify(value.slice(0, 80));
}

function isJsonType(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/** GETs the document from the pinned address and checks the answer; rejects with the refusal. */
function download(
  url: URL,
  pinned: ResolvedAddress,
  settings: { maxBytes: number; ca: ClientMetadataFetcherOptions['ca']; log: (line: string) => void },
  signal: AbortSignal,
): Promise<string> {
  return new Promise<string>((resolvePromise, reject) => {
    const req = request({
      protocol: 'https:',
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port === '' ? 443 : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { Accept: 'application/json', 'User-Agent': 'Engram (OAuth client metadata)' },
      lookup: pinnedLookup(pinned),
      agent: false,
      signal,
      ...(settings.ca === undefined ? {} : { ca: settings.ca as string | Buffer | (string | Buffer)[] }),
    });
    const fail = (error: OAuthError) => {
      reject(error);
      req.destroy();
    };
    req.on('error', (error) => {
      if (signal.aborted) return reject(signal.reason);
      settings.log(`client metadata document ${url.href}: the fetch from ${pinned.address} failed: ${error.message}`);
      reject(connectionFailure(url, error));
    });
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        fail(refuse(url, `answered HTTP ${status} (a redirect); redirects are not followed, use the final URL`));
        return;
      }
      if (status !== 200) return fail(refuse(url, `answered HTTP ${status}; it must answer 200 with the document`));
      if (!isJsonType(res.headers['content-type'])) {
        return fail(refuse(url, `is not JSON (Content-Type ${contentType(res)}); serve it as application/json`));
      }
      const tooBig = () =>
        refuse(url, `is too big: a client metadata document may hold at most ${settings.maxBytes} bytes`);
      if (Number(res.headers['content-length'] ?? 0) > settings.maxBytes) return fail(tooBig());
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > settings.maxBytes) fail(tooBig());
        else chunks.push(chunk);
      });
      res.on('end', () => {
        try {
          resolvePromise(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)));
        } catch {
          reject(refuse(url, 'is not JSON: it is not UTF-8 text'));
        }
      });
      res.on('error', () => {}); // reported by 'close' below
      res.on('close', () => {
        if (!res.complete) reject(signal.aborted ? signal.reason : refuse(url, 'the connection closed mid-document'));
      });
    });
    req.end();
  });
}

function parseDocument(url: URL, text: string): unknown {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the body, which the caller must not read through Engram.
    throw refuse(url, 'is not JSON: the body does not parse');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw refuse(url, 'is not a JSON object; a client metadata document is one JSON object');
  }
  return document;
}

/** Fetches the document at `url` under every guard, once, within the deadline. */
async function fetchDocument(url: URL, options: ClientMetadataFetcherOptions): Promise<unknown> {
  checkUrl(url);
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  const controller = new AbortController();
  const timedOut = refuse(url, `timed out: no complete answer within ${timeoutMs} ms`);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(timedOut);
      reject(timedOut);
    }, timeoutMs);
  });
  const log = options.log ?? (() => {});
  try {
    const pinned = await Promise.race([
      resolve(url, options.lookup ?? systemLookup, options.allowPrivateAddresses ?? false, log),
      deadline,
    ]);
    const settings = { maxBytes: options.maxBytes ?? DEFAULTS.maxBytes, ca: options.ca, log };
    const text = await Promise.race([download(url, pinned, settings, controller.signal), deadline]);
    return parseDocument(url, text);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The fetcher OAuthClients uses for a client_id that is an HTTPS URL: the parsed document,
 * as the server sent it (checking it against the client_id is the caller's business), or
 * an `invalid_client` OAuthError saying why it was refused — never another error, so
 * nothing it meets goes unlogged or reaches the client in the system's words.
 */
export function createClientMetadataFetcher(options: ClientMetadataFetcherOptions = {}): ClientMetadataFetcher {
  const log = options.log ?? (() => {});
  return async (url) => {
    try {
      return await fetchDocument(url, options);
    } catch (error) {
      if (isOAuthError(error)) throw error;
      // A failure no guard worded (a bug, a system call failing unexpectedly): its stack goes
      // to the log, and the client gets words of our own, as for every other failure.
      log(`client metadata document ${url.href}: the fetch failed unexpectedly: ${errorStack(error)}`);
      throw refuse(url, 'cannot be fetched: this server failed while fetching it (its log says why)');
    }
  };
}
