/**
 * The token endpoint's rules and the protected resource's check (DESIGN §8, OAuth 2.1):
 * an authorization code is exchanged once, by the client it was issued to, with the
 * redirect URI and the PKCE verifier of its request; a refresh token rotates, and a
 * second use of either means it was stolen, so the whole grant (every token it holds)
 * is revoked. One exception (RFC 9700 §4.14.2 leaves its detection to the server): the
 * refresh token just rotated, presented again by its client within a few seconds, is a
 * retry or a second tab racing the first, and gets the very pair the first use got
 * (derived from the token and a stored seed, secrets.ts), so the chain never forks.
 * A code is good for exactly one attempt: any refused exchange of a known code (a
 * parameter missing or malformed, a wrong verifier, client or redirect URI) ends its
 * grant, which could never yield tokens afterwards. A refresh that is refused before it
 * is redeemed (wrong client, wider scope, other resource) costs the client nothing.
 * A code or refresh token that is not known, sent by a client that is not known either
 * (its registration was forgotten once no grant named it), is answered invalid_client,
 * RFC 6749 §5.2's word for an unknown client, on which apps register again; with
 * invalid_grant they would send the person to authorize as a client no one knows.
 *
 * Every secret is kept only as its SHA-256 (secrets.ts); access tokens are short-lived
 * and bound to the grant's resource, checked on every MCP request against the store, so
 * a revoked grant fails at once. A grant is one connected app, listed and revoked from
 * the command line beside the static tokens; its name is the actor in history.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import type { Caller } from '../../memory/model/caller.js';
import { EngramError } from '../../memory/model/errors.js';
import type { ExpiredRemoval, GrantRecord, GrantSecretKind, GrantSecretRecord, OAuthStore } from './port.js';
import { canonicalResource, sameResource } from './resource.js';
import { hashSecret, newSecret, newSeed, SECRET_PREFIXES, sameHash, successorSecret } from './secrets.js';
import { type CodeData, DEFAULT_TTLS, OAuthError, SCOPE_READ, SCOPE_WRITE, SCOPES, type Scope } from './types.js';

export interface OAuthTokensOptions {
  /** Clock in milliseconds; tests inject one. */
  readonly now?: () => number;
  /** Lifetimes of access and refresh tokens, in milliseconds (codes' is the consent step's). */
  readonly ttls?: Partial<Record<keyof typeof DEFAULT_TTLS, number>>;
  /** Told when recording a grant's "last used" time failed; the request went on regardless. */
  readonly onTouchError?: (error: unknown) => void;
  /** Whether a client id still names a client (OAuthClients.isKnown); every id does without it. */
  readonly isKnownClient?: (clientId: string) => Promise<boolean>;
}

/** A successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  /** Seconds until the access token expires. */
  readonly expires_in: number;
  readonly refresh_token: string;
  /** What the tokens allow, space-separated. */
  readonly scope: string;
}

export interface CodeExchange {
  readonly code: string;
  readonly codeVerifier: string;
  readonly redirectUri: string;
  readonly clientId: string;
  /** RFC 8707; when given, it must be the grant's resource. */
  readonly resource?: string | undefined;
}

export interface RefreshRequest {
  readonly refreshToken: string;
  readonly clientId: string;
  /** Space-separated; may only narrow what the refresh token allows. */
  readonly scope?: string | undefined;
  readonly resource?: string | undefined;
}

/** A connected app as people see it: one user's grant to one client. */
export interface AppInfo {
  /** The grant's id, which `engram token revoke` takes. */
  readonly id: string;
  readonly name: string;
  readonly clientId: string;
  readonly user: string;
  readonly scopes: readonly Scope[];
  readonly created: number;
  readonly lastUsed: number | undefined;
  /** Its changes are held for the user's review (memory/review.ts). */
  readonly review: boolean;
}

/** What an access or refresh token's secret record keeps in its `data` (JSON). */
interface TokenData {
  /** Space-separated scopes: the grant's, or fewer when a refresh narrowed them. */
  readonly scope: string;
  /** A refresh token's: what its successor pair is derived from (successorSecret); absent on older tokens. */
  readonly seed?: string;
}

/** An access and a refresh token issued together. */
interface Pair {
  readonly access: string;
  readonly refresh: string;
}

/**
 * How long after a refresh token was rotated its client may present it again and get the
 * same successor pair instead of losing the grant. Honest repeats come within a round trip
 * or two: two tabs (or processes) refreshing at once are milliseconds apart, and a client
 * retrying a request whose answer was lost retries within a second or two; 5 s covers
 * that on a slow link or a busy server. It is kept that short because it is also how long
 * a copy of the token could be replayed unnoticed (the replay gets the same pair, never a
 * chain of its own, and the next rotation still tells the two holders apart).
 */
export const REFRESH_REUSE_GRACE_MS = 5_000;

/** RFC 7636 §4.1: 43-128 characters of the unreserved set. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** A grant's "last used" is refreshed at most this often, so checking a token rarely writes. */
const TOUCH_INTERVAL_MS = 60_000;

function grantScopes(grant: GrantRecord): readonly Scope[] {
  return grant.readOnly ? [SCOPE_READ] : SCOPES;
}

function scopeString(scopes: readonly Scope[]): string {
  return SCOPES.filter((scope) => scopes.includes(scope)).join(' ');
}

/** The scopes a token allows (never more than its grant does). */
function tokenScopes(secret: GrantSecretRecord, grant: GrantRecord): readonly Scope[] {
  const scope = tokenData(secret)?.scope;
  if (scope === undefined) return [SCOPE_READ];
  return grantScopes(grant).filter((allowed) => scope.split(' ').includes(allowed));
}

function tokenData(secret: GrantSecretRecord): Partial<TokenData> | undefined {
  try {
    return JSON.parse(secret.data) as Partial<TokenData>;
  } catch {
    return undefined;
  }
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function invalidGrant(description: string): OAuthError {
  return new OAuthError('invalid_grant', description);
}

function checkResource(resource: string | undefined, grant: GrantRecord | undefined): void {
  if (resource === undefined) return;
  if (canonicalResource(resource) === undefined || (grant !== undefined && !sameResource(resource, grant.resource))) {
    throw new OAuthError(
      'invalid_target',
      `resource ${JSON.stringify(resource)} is not what this grant is for${grant ? `: ${grant.resource}` : ''}.`,
    );
  }
}

/** What a code exchange must say besides the code, in a form that can be right; checked once the code is spent. */
function checkCodeExchange(request: CodeExchange): void {
  const missing = (
    [
      ['client_id', request.clientId],
      ['redirect_uri', request.redirectUri],
      ['code_verifier', request.codeVerifier],
    ] as const
  ).filter(([, value]) => value === '');
  if (missing.length > 0) {
    throw new OAuthError(
      'invalid_request',
      `authorization_code needs ${missing.map(([name]) => name).join(', ')}, which the request lacks.`,
    );
  }
  if (!CODE_VERIFIER.test(request.codeVerifier)) {
    throw new OAuthError(
      'invalid_request',
      'code_verifier must be 43-128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636), the secret whose S256 ' +
        'hash was sent as code_challenge.',
    );
  }
  checkResource(request.resource, undefined);
}

export class OAuthTokens {
  private readonly store: OAuthStore;
  private readonly now: () => number;
  private readonly ttls: { readonly access: number; readonly refresh: number };
  private readonly onTouchError: (error: unknown) => void;
  private readonly isKnownClient: (clientId: string) => Promise<boolean>;
  /** Grants whose "last used" is being written: one write at a time per grant. */
  private readonly touching = new Set<string>();

  constructor(store: OAuthStore, options: OAuthTokensOptions = {}) {
    this.store = store;
    this.now = options.now ?? Date.now;
    this.ttls = {
      access: options.ttls?.access ?? DEFAULT_TTLS.access,
      refresh: options.ttls?.refresh ?? DEFAULT_TTLS.refresh,
    };
    this.onTouchError = options.onTouchError ?? (() => {});
    this.isKnownClient = options.isKnownClient ?? (() => Promise.resolve(true));
  }

  /** The authorization_code grant (RFC 6749 §4.1.3, RFC 7636 §4.6): a code for an access and a refresh token. */
  async exchangeCode(request: CodeExchange): Promise<TokenResponse> {
    const hash = hashSecret(request.code);
    const found = await this.store.findSecret(hash);
    if (found === undefined || found.kind !== 'code') {
      checkCodeExchange(request);
      await this.checkClientKnown(request.clientId);
      throw invalidGrant('the authorization code is not known here: it is wrong, expired or revoked. Authorize again.');
    }
    // Spent before anything the request says is checked: whatever is wrong with it (a parameter
    // missing or malformed, the verifier, the client), the code has had its one attempt.
    const redemption = await this.store.consume(hash, this.now());
    if (redemption === undefined) throw invalidGrant('the authorization code was revoked meanwhile. Authorize again.');
    if (!redemption.first) {
      await this.store.revokeByGrantId(found.grantId);
      throw invalidGrant(
        'the authorization code was used before, so it may have been stolen: every token it issued is revoked. ' +
          'Authorize again.',
      );
    }
    try {
      return await this.redeemCode(redemption.secret, request);
    } catch (error) {
      // A code is good for one attempt: its grant can never yield tokens now.
      await this.store.revokeByGrantId(found.grantId);
      throw error;
    }
  }

  private async redeemCode(secret: GrantSecretRecord, request: CodeExchange): Promise<TokenResponse> {
    checkCodeExchange(request);
    if (secret.expires <= this.now()) throw invalidGrant('the authorization code has expired. Authorize again.');
    const grant = await this.store.findGrant(secret.grantId);
    if (grant === undefined) throw invalidGrant('the authorization code was revoked meanwhile. Authorize again.');
    if (grant.clientId !== request.clientId) {
      throw invalidGrant(
        `the authorization code was issued to another client than ${JSON.stringify(request.clientId)}.`,
      );
    }
    const data = JSON.parse(secret.data) as CodeData;
    if (request.redirectUri !== data.redirectUri) {
      throw invalidGrant('redirect_uri must be exactly the one sent in the authorization request.');
    }
    if (!sameText(s256(request.codeVerifier), data.codeChallenge)) {
      throw invalidGrant('code_verifier does not match the code_challenge (S256) of the authorization request.');
    }
    checkResource(request.resource, grant);
    return this.issue(grant, grantScopes(grant));
  }

  /** Refuses a client whose registration is gone with invalid_client, so that it registers again. */
  private async checkClientKnown(clientId: string): Promise<void> {
    if (await this.isKnownClient(clientId)) return;
    throw new OAuthError(
      'invalid_client',
      `the client ${JSON.stringify(clientId)} is not registered here (any more): register again.`,
    );
  }

  /**
   * The refresh_token grant (RFC 6749 §6) with rotation: the old refresh token is spent, a
   * new pair issued; within the grace window, the same pair again (REFRESH_REUSE_GRACE_MS).
   */
  async refresh(request: RefreshRequest): Promise<TokenResponse> {
    checkResource(request.resource, undefined);
    const hash = hashSecret(request.refreshToken);
    const secret = await this.store.findSecret(hash);
    if (secret === undefined || secret.kind !== 'refresh') {
      await this.checkClientKnown(request.clientId);
      throw invalidGrant('the refresh token is not known here: it is wrong or revoked. Authorize again.');
    }
    if (secret.used !== undefined && !this.inGrace(secret)) await this.reused(secret);
    if (secret.expires <= this.now()) throw invalidGrant('the refresh token has expired. Authorize again.');
    const grant = await this.store.findGrant(secret.grantId);
    if (grant === undefined) throw invalidGrant('the refresh token was revoked. Authorize again.');
    if (grant.clientId !== request.clientId) {
      throw invalidGrant(`the refresh token was issued to another client than ${JSON.stringify(request.clientId)}.`);
    }
    checkResource(request.resource, grant);
    const scopes = this.narrow(tokenScopes(secret, grant), request.scope);
    const redemption = await this.store.consume(hash, this.now());
    if (redemption === undefined) throw invalidGrant('the refresh token was revoked meanwhile. Authorize again.');
    if (!redemption.first && !this.inGrace(redemption.secret)) await this.reused(secret);
    const seed = tokenData(redemption.secret)?.seed;
    if (seed === undefined) return this.issue(grant, scopes);
    const pair = {
      access: successorSecret('access', request.refreshToken, seed),
      refresh: successorSecret('refresh', request.refreshToken, seed),
    };
    if (!redemption.first) {
      const again = await this.issued(secret, pair);
      if (again !== undefined) return again;
    }
    return this.issueOnce(grant, scopes, secret, pair);
  }

  /** Whether a spent refresh token is the one just rotated: spent moments ago, with a successor that can be answered again. */
  private inGrace(secret: GrantSecretRecord): boolean {
    return (
      secret.used !== undefined &&
      tokenData(secret)?.seed !== undefined &&
      this.now() - secret.used < REFRESH_REUSE_GRACE_MS
    );
  }

  /** Issues the successor pair, or answers it as a concurrent twin of this request just issued it. */
  private async issueOnce(
    grant: GrantRecord,
    scopes: readonly Scope[],
    spent: GrantSecretRecord,
    pair: Pair,
  ): Promise<TokenResponse> {
    try {
      return await this.issue(grant, scopes, pair);
    } catch (error) {
      if (!(error instanceof EngramError && error.code === 'CONFLICT')) throw error;
      const answer = await this.issued(spent, pair);
      if (answer === undefined) throw invalidGrant('the grant was revoked meanwhile. Authorize again.');
      return answer;
    }
  }

  /**
   * The successor pair as it was issued already, undefined if it was not (yet). When its
   * refresh token was rotated in turn, the token presented is an older one: a replay.
   */
  private async issued(spent: GrantSecretRecord, pair: Pair): Promise<TokenResponse | undefined> {
    const [access, refresh] = await Promise.all([
      this.store.findSecret(hashSecret(pair.access)),
      this.store.findSecret(hashSecret(pair.refresh)),
    ]);
    if (access === undefined || refresh === undefined) return undefined;
    if (refresh.used !== undefined) await this.reused(spent);
    return {
      access_token: pair.access,
      token_type: 'Bearer',
      expires_in: Math.max(0, Math.floor((access.expires - this.now()) / 1000)),
      refresh_token: pair.refresh,
      scope: tokenData(refresh)?.scope ?? SCOPE_READ,
    };
  }

  /** A spent refresh token presented again: it was copied, so the grant ends. */
  private async reused(secret: GrantSecretRecord): Promise<never> {
    await this.store.revokeByGrantId(secret.grantId);
    throw invalidGrant(
      'the refresh token was used before, so it may have been stolen: the grant and every token it holds are ' +
        'revoked. Authorize again.',
    );
  }

  /** The scopes asked for a refresh, which may only narrow what the token allows (RFC 6749 §6). */
  private narrow(allowed: readonly Scope[], requested: string | undefined): readonly Scope[] {
    if (requested === undefined) return allowed;
    const asked = requested.split(' ');
    const unknown = asked.find((scope) => !(SCOPES as readonly string[]).includes(scope));
    if (unknown !== undefined) {
      throw new OAuthError('invalid_scope', `scope ${JSON.stringify(unknown)} is not one of ${SCOPES.join(', ')}.`);
    }
    const wider = asked.find((scope) => !(allowed as readonly string[]).includes(scope));
    if (wider !== undefined) {
      throw new OAuthError(
        'invalid_scope',
        `scope ${wider} was not granted: a refresh may only narrow the scope (${scopeString(allowed)}).`,
      );
    }
    // Reading is what every connection may do; memory:write alone still reads.
    return asked.includes(SCOPE_WRITE) ? SCOPES : [SCOPE_READ];
  }

  /**
   * A new access and refresh token for the grant (`pair`, or fresh random ones); refused
   * when the grant was revoked meanwhile, CONFLICT when the pair was issued already.
   */
  private async issue(
    grant: GrantRecord,
    scopes: readonly Scope[],
    pair: Pair = { access: newSecret('access'), refresh: newSecret('refresh') },
  ): Promise<TokenResponse> {
    const now = this.now();
    const scope = scopeString(scopes);
    const secret = (kind: GrantSecretKind, value: string, ttl: number, data: TokenData): GrantSecretRecord => ({
      hash: hashSecret(value),
      grantId: grant.id,
      kind,
      created: now,
      expires: now + ttl,
      used: undefined,
      data: JSON.stringify(data),
    });
    const added = await this.store.saveSecrets(grant.id, [
      secret('access', pair.access, this.ttls.access, { scope }),
      secret('refresh', pair.refresh, this.ttls.refresh, { scope, seed: newSeed() }),
    ]);
    if (!added) throw invalidGrant('the grant was revoked meanwhile. Authorize again.');
    return {
      access_token: pair.access,
      token_type: 'Bearer',
      expires_in: Math.floor(this.ttls.access / 1000),
      refresh_token: pair.refresh,
      scope,
    };
  }

  /**
   * Token revocation (RFC 7009): an access or refresh token ends its whole grant. An
   * unknown token is not an error (it may have been revoked already).
   */
  async revoke(token: string): Promise<void> {
    const secret = await this.store.findSecret(hashSecret(token));
    if (secret !== undefined && secret.kind !== 'code') await this.store.revokeByGrantId(secret.grantId);
  }

  /**
   * Who presents this access token at `resource` (this server's `/mcp` URL): the grant's
   * user, its app's name (what history records), whether it may write, that it is an app,
   * and whether its grant is read-only (a token the app narrowed itself may be read-only in
   * a grant that is not). Undefined when the token is unknown, expired, revoked or for
   * another resource.
   */
  async authenticate(accessToken: string, resource: string): Promise<Caller | undefined> {
    if (!accessToken.startsWith(SECRET_PREFIXES.access)) return undefined;
    const hash = hashSecret(accessToken);
    const secret = await this.store.findSecret(hash);
    // The lookup is keyed by a hash the caller cannot steer; the comparison is constant-time all the same.
    if (secret === undefined || !sameHash(secret.hash, hash) || secret.kind !== 'access') return undefined;
    const at = this.now();
    if (secret.expires <= at) return undefined;
    const grant = await this.store.findGrant(secret.grantId);
    if (grant === undefined || !sameResource(grant.resource, resource)) return undefined;
    if (grant.lastUsed === undefined || at - grant.lastUsed >= TOUCH_INTERVAL_MS) this.touch(grant.id, at);
    return {
      user: grant.user,
      label: grant.clientName,
      readOnly: !tokenScopes(secret, grant).includes(SCOPE_WRITE),
      oauthApp: true,
      readOnlyGrant: grant.readOnly,
      review: grant.review,
    };
  }

  /** Records that the grant was used, without waiting: a failure goes to onTouchError, never to the request. */
  private touch(id: string, at: number): void {
    if (this.touching.has(id)) return;
    this.touching.add(id);
    Promise.resolve()
      .then(() => this.store.touchGrant(id, at))
      .catch((error: unknown) => this.onTouchError(error))
      .finally(() => this.touching.delete(id));
  }

  /** Every connected app (grant), oldest first. */
  async listApps(): Promise<AppInfo[]> {
    const grants = await this.store.listGrants();
    return grants.map((grant) => ({
      id: grant.id,
      name: grant.clientName,
      clientId: grant.clientId,
      user: grant.user,
      scopes: grantScopes(grant),
      created: grant.created,
      lastUsed: grant.lastUsed,
      review: grant.review,
    }));
  }

  /** The connected apps of `user` alone, oldest first: what a person may see of them (the web UI). */
  async listAppsOf(user: string): Promise<AppInfo[]> {
    return (await this.listApps()).filter((app) => app.user === user);
  }

  /**
   * Puts one of `user`'s own apps in review mode (its changes held for their review) or out
   * of it, from its next request on; false for an app of another user, as for none;
   * INVALID_ARGUMENT for a read-only app, which changes nothing to review.
   */
  async setAppReviewOf(user: string, id: string, review: boolean): Promise<boolean> {
    const grant = await this.store.findGrant(id.trim());
    if (grant === undefined || grant.user !== user) return false;
    if (grant.readOnly && review) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `${grant.clientName} is connected read-only: it changes nothing, so nothing of it needs review. To let it ` +
          'propose changes, connect it again and choose "Changes need my review" on the consent page.',
      );
    }
    return this.store.setGrantReview(grant.id, review);
  }

  /** Ends one of `user`'s own apps; false for an app of another user, as for none, which stays. */
  async revokeAppOf(user: string, id: string): Promise<boolean> {
    const grant = await this.store.findGrant(id.trim());
    return grant !== undefined && grant.user === user && this.store.revokeByGrantId(grant.id);
  }

  /** Ends a connected app: its grant and every token it holds, at once. False when no grant has this id. */
  revokeApp(id: string): Promise<boolean> {
    return this.store.revokeByGrantId(id.trim());
  }

  /**
   * Deletes codes and tokens past their expiry, and the grants left holding none (they can
   * never be used again, yet would stay listed as connected apps); returns how many of each.
   */
  purgeExpired(): Promise<ExpiredRemoval> {
    return this.store.removeExpired(this.now());
  }
}
