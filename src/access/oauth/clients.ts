/**
 * Who may ask for tokens (DESIGN §8): clients listed in the config file, clients that
 * registered themselves (RFC 7591 Dynamic Client Registration, kept in the store, their
 * number capped), and clients whose id is the https URL of a Client ID Metadata Document
 * (fetched by an injected function that guards against SSRF, checked, and cached for a
 * few minutes). Every client is public (PKCE, no secret), and what a registration or a
 * document may hold is bounded: it is shown on the consent page and recorded in history.
 *
 * Anyone may register, so the cap must never lock real apps out: a registration no grant
 * names (nobody allowed it) is forgotten after an hour, and at the cap the oldest such
 * registration gives way to the new one; a client someone allowed is never pushed out,
 * nor one whose consent page was shown in the last CONSENT_SHOWN_MS (a person may be
 * reading it: a flood of registrations, however fast, cannot take their app from them).
 */

import { randomBytes } from 'node:crypto';
import { charLength, foldDescription } from '../../memory/model/text.js';
import type { OAuthStore } from './port.js';
import { matchesRedirectUri, redirectUriProblem } from './redirect-uris.js';
import { isOAuthError, type OAuthClient, OAuthError } from './types.js';

/** How many clients may register before registration is refused. */
export const DEFAULT_MAX_REGISTRATIONS = 1_000;
export const CLIENT_NAME_CAP = 100;
export const REDIRECT_URIS_CAP = 10;
/**
 * How old a registered client no grant names must be before it is deleted: an hour, long
 * enough for a person to finish the consent page after their client registered (the
 * client's id must still be known when they allow it; from then on a grant names it).
 */
export const UNUSED_CLIENT_AGE_MS = 60 * 60 * 1000;
/**
 * How long after its consent page was last shown a registered client is kept, allowed or
 * not, whatever the cap: time for a person to read the page, sign in and decide.
 */
export const CONSENT_SHOWN_MS = 30 * 60 * 1000;
/** How long a fetched metadata document is trusted, and how many are kept. */
const DOCUMENT_TTL_MS = 5 * 60_000;
const DOCUMENT_CACHE_SIZE = 200;
/**
 * Metadata documents fetched at once, at most. Anyone may name any https URL as a
 * client_id on /authorize, so without a bound the server would open as many outgoing
 * connections as it is sent requests (and could be made to call a third party on and on).
 */
export const MAX_DOCUMENT_FETCHES = 8;

const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
const RESPONSE_TYPES = ['code'] as const;

export interface OAuthClientsOptions {
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
  /** Clients listed in the config file; they win over any other with the same id. */
  readonly configured?: readonly OAuthClient[];
  /**
   * Fetches a client metadata document (with SSRF guards); without it, URL client ids are
   * unknown. Its OAuthError refusals are shown to the client; any other failure is not, so
   * the fetcher logs what it refuses and every failure of its own (as
   * access/oauth/http/client-metadata.ts does): this module has no log.
   */
  readonly fetchDocument?: (url: URL) => Promise<unknown>;
  readonly maxRegistrations?: number;
}

/** The answer to a registration (RFC 7591 §3.2.1). */
export interface ClientRegistration {
  readonly client_id: string;
  readonly client_id_issued_at: number;
  readonly client_name: string;
  readonly redirect_uris: readonly string[];
  readonly grant_types: readonly string[];
  readonly response_types: readonly string[];
  readonly token_endpoint_auth_method: 'none';
}

interface CheckedMetadata {
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly grantTypes: readonly string[];
  readonly responseTypes: readonly string[];
}

/** How a refusal of the metadata is worded and coded: by registration or by a metadata document. */
type Refuse = (code: 'invalid_redirect_uri' | 'invalid_client_metadata', description: string) => OAuthError;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A list of strings, each one of `allowed`; `fallback` when absent. */
function subset(
  metadata: Record<string, unknown>,
  field: string,
  allowed: readonly string[],
  fallback: readonly string[],
  refuse: Refuse,
): readonly string[] {
  const value = metadata[field];
  if (value === undefined) return fallback;
  const fits = `${field} must be a list of ${allowed.map((item) => JSON.stringify(item)).join(' and ')}`;
  if (!Array.isArray(value) || value.length === 0) throw refuse('invalid_client_metadata', `${fits}.`);
  const unknown = value.find((item) => typeof item !== 'string' || !allowed.includes(item));
  if (unknown !== undefined) {
    throw refuse('invalid_client_metadata', `${fits}; this server does not support ${JSON.stringify(unknown)}.`);
  }
  return [...new Set(value as string[])];
}

/** The host a redirect URI returns to, or its private-use scheme: the name of a client that gives none. */
function returnHost(uri: string): string {
  const url = new URL(uri);
  return url.host || url.protocol.slice(0, -1);
}

/**
 * The client-secret methods a registration may ask for and be given `none` instead (RFC 7591
 * §3.2.1 lets the server replace a requested value; the answer says what was registered).
 * Clients built from the MCP SDK's examples ask for client_secret_post; with no secret issued,
 * they authenticate as public clients, which PKCE and the exact redirect URI protect.
 */
const REPLACEABLE_AUTH_METHODS: ReadonlySet<unknown> = new Set(['client_secret_post', 'client_secret_basic']);

/**
 * Checks what a registration or a metadata document says about a client. A registration's
 * client-secret method is replaced by `none`; a metadata document is the client's own
 * statement of how it authenticates, so there anything but `none` is refused.
 */
function checkMetadata(
  metadata: unknown,
  defaultName: (uris: readonly string[]) => string,
  refuse: Refuse,
  origin: 'registration' | 'document',
) {
  if (!isObject(metadata)) throw refuse('invalid_client_metadata', 'the client metadata must be a JSON object.');
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > REDIRECT_URIS_CAP) {
    throw refuse(
      'invalid_redirect_uri',
      `redirect_uris must be a list of 1-${REDIRECT_URIS_CAP} URIs where the authorization code may be sent.`,
    );
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) throw refuse('invalid_redirect_uri', `${problem}.`);
  }
  const redirectUris = [...new Set(uris as string[])];
  const method = metadata.token_endpoint_auth_method;
  const replaced = origin === 'registration' && REPLACEABLE_AUTH_METHODS.has(method);
  if (method !== undefined && method !== 'none' && !replaced) {
    throw refuse(
      'invalid_client_metadata',
      `token_endpoint_auth_method ${JSON.stringify(method)} is not supported: this server has public clients only ` +
        '(PKCE, no client secret), so register with "token_endpoint_auth_method": "none".',
    );
  }
  const grantTypes = subset(metadata, 'grant_types', GRANT_TYPES, GRANT_TYPES, refuse);
  if (!grantTypes.includes('authorization_code')) {
    throw refuse('invalid_client_metadata', 'grant_types must include "authorization_code".');
  }
  const responseTypes = subset(metadata, 'response_types', RESPONSE_TYPES, RESPONSE_TYPES, refuse);
  const rawName = metadata.client_name;
  if (rawName !== undefined && typeof rawName !== 'string') {
    throw refuse('invalid_client_metadata', 'client_name must be a string.');
  }
  const folded = foldDescription(rawName ?? '');
  if (charLength(folded) > CLIENT_NAME_CAP) {
    throw refuse('invalid_client_metadata', `client_name must be at most ${CLIENT_NAME_CAP} characters.`);
  }
  const name = folded === '' ? defaultName(redirectUris) : folded;
  return { name, redirectUris, grantTypes, responseTypes } satisfies CheckedMetadata;
}

const refuseRegistration: Refuse = (code, description) => new OAuthError(code, description);

/** Whether `id` can name a metadata document: an https URL in normal form, with a path, without fragment or credentials. */
function isDocumentUrl(id: string): boolean {
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    return false;
  }
  return (
    url.protocol === 'https:' &&
    url.href === id &&
    url.pathname !== '/' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === ''
  );
}

function unknownClient(id: string, detail: string): OAuthError {
  return new OAuthError('invalid_client', `no client has the id ${JSON.stringify(id)}: ${detail}`);
}

export class OAuthClients {
  private readonly store: OAuthStore;
  private readonly now: () => number;
  private readonly configured: ReadonlyMap<string, OAuthClient>;
  private readonly fetchDocument: ((url: URL) => Promise<unknown>) | undefined;
  private readonly maxRegistrations: number;
  /** Checked documents by URL, oldest first (a Map keeps insertion order). */
  private readonly documents = new Map<string, { readonly client: OAuthClient; readonly expires: number }>();
  /** Fetches under way, so that many requests for one document fetch it once. */
  private readonly fetching = new Map<string, Promise<OAuthClient>>();

  constructor(store: OAuthStore, options: OAuthClientsOptions = {}) {
    this.store = store;
    this.now = options.now ?? Date.now;
    this.configured = new Map((options.configured ?? []).map((client) => [client.id, client]));
    this.fetchDocument = options.fetchDocument;
    this.maxRegistrations = options.maxRegistrations ?? DEFAULT_MAX_REGISTRATIONS;
  }

  /** Dynamic Client Registration (RFC 7591): checks the metadata, keeps the client, answers its registration. */
  async register(metadata: unknown): Promise<ClientRegistration> {
    const checked = checkMetadata(metadata, (uris) => returnHost(uris[0]!), refuseRegistration, 'registration');
    // Room is made before adding, so concurrent registrations may pass the cap by a few: it bounds growth, not a count.
    if (!(await this.makeRoom())) {
      throw new OAuthError(
        'temporarily_unavailable',
        `this server accepts no more registrations for now (it holds ${this.maxRegistrations}, each allowed by a ` +
          `user or shown on its consent page in the last ${CONSENT_SHOWN_MS / 60_000} minutes): try again later, ask ` +
          'its operator to list your client in the config file, or use a client metadata document URL as the client_id.',
      );
    }
    const created = this.now();
    const registration: ClientRegistration = {
      client_id: randomBytes(16).toString('hex'),
      client_id_issued_at: Math.floor(created / 1000),
      client_name: checked.name,
      redirect_uris: checked.redirectUris,
      grant_types: checked.grantTypes,
      response_types: checked.responseTypes,
      token_endpoint_auth_method: 'none',
    };
    await this.store.saveClient({
      id: registration.client_id,
      name: checked.name,
      redirectUris: checked.redirectUris,
      created,
      metadata: JSON.stringify(registration),
    });
    return registration;
  }

  /**
   * Below the cap, true; at it, the oldest registrations no grant names and whose consent
   * page was not shown lately give way (whatever their age), and false when none may.
   */
  private async makeRoom(): Promise<boolean> {
    const count = await this.store.countClients();
    if (count < this.maxRegistrations) return true;
    const shownBefore = this.now() - CONSENT_SHOWN_MS;
    return (await this.store.removeOldestUnusedClients(count - this.maxRegistrations + 1, shownBefore)) > 0;
  }

  /**
   * Deletes registered clients no grant names that registered over an hour ago and whose
   * consent page was not shown lately; returns how many.
   */
  removeUnused(): Promise<number> {
    const now = this.now();
    return this.store.removeUnusedClients(now - UNUSED_CLIENT_AGE_MS, now - CONSENT_SHOWN_MS);
  }

  /** Records that the consent page is shown for `client` now: a registered one is then kept a while (CONSENT_SHOWN_MS). */
  async markShown(client: OAuthClient): Promise<void> {
    if (client.kind === 'registered') await this.store.markClientShown(client.id, this.now());
  }

  /**
   * Whether `clientId` still names a client, fetching nothing: configured, registered here,
   * or a metadata document URL (checked when it authorizes). A registered client no grant
   * names is forgotten after an hour (removeUnused), or sooner at the cap, so an app may
   * come back with an id that is gone; the token endpoint asks this to tell it to register again.
   */
  async isKnown(clientId: string): Promise<boolean> {
    if (this.configured.has(clientId) || isDocumentUrl(clientId)) return true;
    return (await this.store.findClient(clientId)) !== undefined;
  }

  /** The client with this id: configured, registered, or described by the document at this URL. */
  async resolve(clientId: string): Promise<OAuthClient> {
    const configured = this.configured.get(clientId);
    if (configured !== undefined) return configured;
    const record = await this.store.findClient(clientId);
    if (record !== undefined) {
      return { id: record.id, kind: 'registered', name: record.name, redirectUris: record.redirectUris };
    }
    if (isDocumentUrl(clientId)) {
      if (this.fetchDocument === undefined) {
        throw unknownClient(
          clientId,
          'this server does not fetch client metadata documents; register instead (POST /register).',
        );
      }
      return this.fromDocument(clientId, this.fetchDocument);
    }
    throw unknownClient(
      clientId,
      'register first (POST /register, RFC 7591), use the https URL of your client metadata document as the ' +
        "client_id, or ask this server's operator to list your client in its config file.",
    );
  }

  /** Whether `uri` is one of the client's redirect URIs (a loopback http one on any port). */
  matchRedirectUri(client: OAuthClient, uri: string): boolean {
    return matchesRedirectUri(client.redirectUris, uri);
  }

  private fromDocument(url: string, fetchDocument: (url: URL) => Promise<unknown>): Promise<OAuthClient> {
    const cached = this.documents.get(url);
    if (cached !== undefined && cached.expires > this.now()) return Promise.resolve(cached.client);
    const under = this.fetching.get(url);
    if (under !== undefined) return under;
    if (this.fetching.size >= MAX_DOCUMENT_FETCHES) {
      return Promise.reject(
        new OAuthError(
          'temporarily_unavailable',
          `this server is fetching ${MAX_DOCUMENT_FETCHES} client metadata documents already: try again in a few seconds.`,
        ),
      );
    }
    const fetched = this.fetchAndCheck(url, fetchDocument).finally(() => this.fetching.delete(url));
    this.fetching.set(url, fetched);
    return fetched;
  }

  private async fetchAndCheck(url: string, fetchDocument: (url: URL) => Promise<unknown>): Promise<OAuthClient> {
    // Every refusal of a document is about the client: invalid_client, saying what was wrong with it.
    const refuse: Refuse = (_code, description) =>
      new OAuthError('invalid_client', `the client metadata document at ${url} cannot be used: ${description}`);
    let document: unknown;
    try {
      document = await fetchDocument(new URL(url));
    } catch (error) {
      // Only the fetcher's own refusals are worded for the client; any other failure's text could
      // name what lies behind this server (addresses, ports, hosts), so it is not passed on
      // (logging it is the fetcher's: see fetchDocument above).
      throw refuse('invalid_client_metadata', isOAuthError(error) ? error.description : 'it could not be fetched.');
    }
    if (isObject(document) && document.client_id !== url) {
      throw refuse(
        'invalid_client_metadata',
        `its client_id ${JSON.stringify(document.client_id)} must be exactly the URL it is served from.`,
      );
    }
    const checked = checkMetadata(document, () => new URL(url).host, refuse, 'document');
    const client: OAuthClient = {
      id: url,
      kind: 'metadata-document',
      name: checked.name,
      redirectUris: checked.redirectUris,
    };
    this.documents.delete(url);
    this.documents.set(url, { client, expires: this.now() + DOCUMENT_TTL_MS });
    for (const oldest of this.documents.keys()) {
      if (this.documents.size <= DOCUMENT_CACHE_SIZE) break;
      this.documents.delete(oldest);
    }
    return client;
  }
}
