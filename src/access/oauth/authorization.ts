/**
 * The consent step of OAuth (DESIGN §8, RFC 6749 §4.1 with OAuth 2.1's rules): check an
 * authorization request, then record the user's decision. A request whose client or
 * redirect URI is bad is answered on a page of our own and never redirected (sending the
 * browser to an unchecked address would make Engram an open redirector). Once both are
 * good, a refusal goes back on the redirect URI (with `state` and `iss`, RFC 9207, as on
 * success) only for a client the operator listed in the config file: anyone can register
 * a client or publish a metadata document naming their own site as its redirect URI, and
 * then send a bad request on purpose to have Engram's address send people there (RFC 9700
 * §4.11.2), so for those clients every refusal is a page of our own too, which names what
 * was wrong without repeating what the request or the client's document said (a short
 * plain word at most: a page of Engram's must not carry a message of theirs, such as
 * "session expired, sign in at …"). Allowing creates the grant (one connected app) with
 * its authorization code, atomically; the code is shown once, in the redirect, and kept
 * only as its SHA-256, with the redirect URI and PKCE challenge the token endpoint checks.
 */

import { randomBytes } from 'node:crypto';
import { EngramError } from '../../memory/model/errors.js';
import type { OAuthClients } from './clients.js';
import type { GrantRecord, GrantSecretRecord, OAuthStore } from './port.js';
import { sameResource } from './resource.js';
import { hashSecret, newSecret } from './secrets.js';
import {
  type AuthorizationRequest,
  type CodeData,
  DEFAULT_TTLS,
  isOAuthError,
  type OAuthClient,
  type OAuthErrorCode,
  SCOPE_WRITE,
  SCOPES,
  type Scope,
} from './types.js';

/**
 * What a person lets an app do on the consent page: read and change memory, change it only
 * through proposals they review (memory/review.ts), or read only.
 */
export type GrantAccess = 'write' | 'review' | 'read';

/**
 * The part of the client service the consent step needs: who the client is, whether a
 * redirect URI is its own, and noting that its consent page is shown (so it is kept a while).
 */
export type ClientDirectory = Pick<OAuthClients, 'resolve' | 'matchRedirectUri' | 'markShown'>;

export interface AuthorizationOptions {
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
  /** This authorization server's issuer identifier, returned as `iss` with every answer. */
  readonly issuer: string;
  /** This server's `/mcp` URL: the one resource its tokens are for. */
  readonly resource: string;
  /** How long a code may wait to be exchanged (default DEFAULT_TTLS.code). */
  readonly codeTtlMs?: number;
}

/**
 * A request's parameters, by name; a parameter sent more than once comes as the list of
 * its values (RFC 6749 §3.1: it is refused, except `resource`, which RFC 8707 allows repeated).
 */
export type AuthorizationParams = Readonly<Record<string, string | readonly string[] | undefined>>;

export type AuthorizationCheck =
  /**
   * Refused on a page of our own (a bad client or redirect URI, or any refusal for a client
   * the config file does not list); `message` is for the person in the browser.
   */
  | { readonly kind: 'page'; readonly message: string }
  /** The request of a configured client is refused, and the client told so on its redirect URI. */
  | { readonly kind: 'redirect'; readonly url: string }
  /** Ready for the user's decision. */
  | { readonly kind: 'ok'; readonly request: AuthorizationRequest };

/** The parameters an authorization request is made of: what a consent form carries to be checked again. */
export const AUTHORIZATION_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'scope',
  'state',
  'resource',
] as const;

/** The parameters read after the redirect URI that may be sent only once; unknown ones are ignored, as RFC 6749 §3.1 asks. */
const SINGLE_PARAMS = ['response_type', 'code_challenge', 'code_challenge_method', 'scope', 'state'] as const;

/** What an S256 code challenge is: the base64url (no padding) of a SHA-256 digest. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** `uri` with `params` added to its query, keeping the query it had (RFC 6749 §3.1.2). */
function withQuery(uri: string, params: Readonly<Record<string, string | undefined>>): string {
  const added = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) added.append(name, value);
  const separator = !uri.includes('?') ? '?' : uri.endsWith('?') || uri.endsWith('&') ? '' : '&';
  return `${uri}${separator}${added.toString()}`;
}

export class Authorization {
  private readonly store: OAuthStore;
  private readonly clients: ClientDirectory;
  private readonly now: () => number;
  private readonly issuer: string;
  private readonly resource: string;
  private readonly codeTtlMs: number;

  constructor(store: OAuthStore, clients: ClientDirectory, options: AuthorizationOptions) {
    this.store = store;
    this.clients = clients;
    this.now = options.now ?? Date.now;
    this.issuer = options.issuer;
    this.resource = options.resource;
    this.codeTtlMs = options.codeTtlMs ?? DEFAULT_TTLS.code;
  }

  /** Checks an authorization request, in the order that decides where a refusal may go. */
  async check(params: AuthorizationParams): Promise<AuthorizationCheck> {
    const clientId = params.client_id;
    if (typeof clientId !== 'string' || clientId === '') {
      return page(
        clientId === undefined || clientId === ''
          ? 'The app did not say who it is (the request has no client_id).'
          : 'The app named itself more than once (the request has several client_id parameters).',
      );
    }
    let client: OAuthClient;
    try {
      client = await this.clients.resolve(clientId);
    } catch (error) {
      if (isOAuthError(error))
        return page(`Engram does not know this app: ${withoutRequestText(error.description, clientId)}`);
      throw error;
    }
    const redirectUri = params.redirect_uri;
    if (typeof redirectUri !== 'string' || redirectUri === '') {
      return page(
        redirectUri === undefined || redirectUri === ''
          ? `${client.name} did not say where to return (the request has no redirect_uri).`
          : `${client.name} named more than one address to return to (several redirect_uri parameters).`,
      );
    }
    if (!isRedirectUri(redirectUri) || !this.clients.matchRedirectUri(client, redirectUri)) {
      return page(
        `${client.name} asked to return to an address it did not register (its redirect_uri), ` +
          'so Engram will not send you there.',
      );
    }
    // A configured client is told its refusal on its redirect URI, where a value it sent may be
    // repeated; any other is refused on Engram's own page, which must not carry text of theirs.
    const value = client.kind === 'configured' ? quoted : pageValue;

    const state = single(params.state);
    const refuse = (error: OAuthErrorCode, description: string): AuthorizationCheck =>
      client.kind === 'configured'
        ? {
            kind: 'redirect',
            url: withQuery(redirectUri, {
              error,
              error_description: description,
              state: typeof state === 'string' ? state : undefined,
              iss: this.issuer,
            }),
          }
        : page(
            `${client.name} sent a request Engram cannot accept (${error}): ${description} ` +
              `Engram does not send you back to ${client.name} with this error, since no one has allowed it yet.`,
          );
    const repeated = SINGLE_PARAMS.find((name) => Array.isArray(params[name]));
    if (repeated !== undefined) {
      return refuse('invalid_request', `${repeated} is sent more than once; send each parameter once.`);
    }

    const responseType = single(params.response_type);
    if (responseType === undefined || responseType === '') {
      return refuse('invalid_request', 'response_type is missing: send response_type=code.');
    }
    if (responseType !== 'code') {
      return refuse(
        'unsupported_response_type',
        `${named('response_type', value(responseType))} is not supported: Engram issues authorization codes only (response_type=code).`,
      );
    }
    const codeChallenge = single(params.code_challenge);
    if (codeChallenge === undefined || codeChallenge === '') {
      return refuse(
        'invalid_request',
        'code_challenge is missing: PKCE is required; send code_challenge (base64url of the SHA-256 of the verifier) with code_challenge_method=S256.',
      );
    }
    const method = single(params.code_challenge_method);
    if (method !== 'S256') {
      return refuse(
        'invalid_request',
        method === undefined || method === ''
          ? 'code_challenge_method is missing: Engram accepts only S256; send code_challenge_method=S256.'
          : `${named('code_challenge_method', value(method))} is refused: Engram accepts only S256 (never plain).`,
      );
    }
    if (!S256_CHALLENGE.test(codeChallenge)) {
      return refuse(
        'invalid_request',
        'code_challenge is not an S256 challenge: send the base64url encoding, without padding, of the SHA-256 of the code verifier (43 characters).',
      );
    }
    const scopes = parseScopes(single(params.scope));
    if (typeof scopes === 'string') {
      return refuse(
        'invalid_scope',
        `${named('scope', value(scopes))} is unknown: ask for ${SCOPES.join(' and/or ')}, separated by spaces.`,
      );
    }
    const resources = params.resource === undefined ? [] : ([] as string[]).concat(params.resource);
    const foreign = resources.find((resource) => !sameResource(resource, this.resource));
    if (foreign !== undefined) {
      return refuse(
        'invalid_target',
        `${named('resource', value(foreign))} is not served here: Engram's tokens are for ${this.resource} only.`,
      );
    }
    // A person is about to see the consent page: the client is not to be pushed out while they decide.
    await this.clients.markShown(client);
    return {
      kind: 'ok',
      request: { client, redirectUri, state, codeChallenge, scopes, resource: this.resource },
    };
  }

  /**
   * Records that `user` allowed the request: a new grant (read-only when they narrowed it
   * or the app asked to read only; with its changes held for review when they chose so)
   * with its authorization code. Returns where to send the
   * browser: the redirect URI with the code, `state` and `iss`. UNAUTHORIZED, recording
   * nothing, when `user` has no account (removed since they signed in): the store keeps a
   * grant only while its user has an account, checked in the step that keeps it.
   */
  async approve(request: AuthorizationRequest, user: string, access: GrantAccess): Promise<string> {
    const now = this.now();
    const readOnly = access === 'read' || !request.scopes.includes(SCOPE_WRITE);
    const grant: GrantRecord = {
      id: randomBytes(6).toString('hex'),
      user,
      clientId: request.client.id,
      clientName: request.client.name,
      readOnly,
      resource: request.resource,
      created: now,
      lastUsed: undefined,
      review: !readOnly && access === 'review',
    };
    const code = newSecret('code');
    const data: CodeData = { redirectUri: request.redirectUri, codeChallenge: request.codeChallenge };
    const secret: GrantSecretRecord = {
      hash: hashSecret(code),
      grantId: grant.id,
      kind: 'code',
      created: now,
      expires: now + this.codeTtlMs,
      used: undefined,
      data: JSON.stringify(data),
    };
    if (!(await this.store.saveGrant(grant, secret))) {
      throw new EngramError('UNAUTHORIZED', `user ${user} has no account, so nothing was allowed.`);
    }
    return withQuery(request.redirectUri, { code, state: request.state, iss: this.issuer });
  }

  /** Where to send the browser when the user denied the request; nothing is recorded. */
  deny(request: AuthorizationRequest): string {
    return withQuery(request.redirectUri, {
      error: 'access_denied',
      error_description: 'The user denied the request.',
      state: request.state,
      iss: this.issuer,
    });
  }
}

/** Longest part of a request's value a refusal sent back to a configured client repeats. */
const SHOWN_CAP = 80;

/**
 * What of a value Engram's own page may repeat: a short word of letters, digits and
 * `:._-` (a scope, a method's name), too little to write a message with — no spaces, no
 * slashes, so no sentence and no address. Anything else is named, not shown.
 */
const PAGE_VALUE = /^[A-Za-z0-9:._-]{1,16}$/;

/** A value of the request in quotes, cut short: for a refusal sent to a configured client. */
function quoted(value: string): string {
  return JSON.stringify(value.length > SHOWN_CAP ? `${value.slice(0, SHOWN_CAP)}…` : value);
}

/** A value of the request as Engram's own page may show it: quoted if a short plain word, else nothing. */
function pageValue(value: string): string | undefined {
  return PAGE_VALUE.test(value) ? JSON.stringify(value) : undefined;
}

/** A parameter as a refusal names it: with its value when that may be shown, else as "the … sent". */
function named(parameter: string, value: string | undefined): string {
  return value === undefined ? `the ${parameter} sent` : `${parameter} ${value}`;
}

/** Words a refusal of the client quotes itself (clients.ts): kept on the page whatever their length. */
const OWN_WORDS: ReadonlySet<string> = new Set([
  'authorization_code',
  'refresh_token',
  'code',
  'none',
  'token_endpoint_auth_method',
]);

/**
 * A refusal of the client (clients.ts, the metadata fetch) worded for Engram's own page:
 * every quoted value (from the request or the client's document) is shown only if a short
 * plain word or one of Engram's own, and a metadata document's address — the client_id,
 * which the app chose — is named, not repeated.
 */
function withoutRequestText(description: string, clientId: string): string {
  const unquoted = description.replace(/"(?:[^"\\]|\\.)*"/g, (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (typeof value === 'string' && OWN_WORDS.has(value)) return text;
    return (typeof value === 'string' && pageValue(value)) || '(a value not shown here)';
  });
  if (!clientId.startsWith('https://')) return unquoted;
  return unquoted
    .replaceAll(`client metadata document ${clientId}: `, '')
    .replaceAll(clientId, 'the address its client_id names');
}
function page(message: string): AuthorizationCheck {
  return { kind: 'page', message };
}

/** The value of a parameter sent once; a repeated one is refused before its value is read. */
function single(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** An absolute URI without a fragment (RFC 6749 §3.1.2); whether the client registered it is the client service's call. */
function isRedirectUri(uri: string): boolean {
  if (uri.includes('#')) return false;
  try {
    new URL(uri);
    return true;
  } catch {
    return false;
  }
}

/** The scopes asked, in canonical order, every scope when none is asked; or the first unknown one. */
function parseScopes(raw: string | undefined): readonly Scope[] | string {
  const asked = (raw ?? '').split(' ').filter((scope) => scope !== '');
  if (asked.length === 0) return SCOPES;
  const unknown = asked.find((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown !== undefined) return unknown;
  return SCOPES.filter((scope) => asked.includes(scope));
}
