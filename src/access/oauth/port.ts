/**
 * The port the OAuth server (authorization.ts, clients.ts, tokens.ts) keeps its clients,
 * grants (connected apps) and the secrets a grant holds (authorization codes, access and
 * refresh tokens) behind. A backend offers it beside the memory port, in the same
 * database. Every secret is kept only as the hex SHA-256 of its value.
 */

/** A client that registered itself (RFC 7591); CIMD and configured clients are not stored. */
export interface ClientRecord {
  /** The client_id handed out at registration. */
  readonly id: string;
  /** The client's name, as shown on the consent page and recorded in history. */
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly created: number;
  /** The registration as accepted and answered, JSON; kept to answer it again. */
  readonly metadata: string;
}

/** A connected app: one user's consent to one client, with the rights they allowed. */
export interface GrantRecord {
  readonly id: string;
  readonly user: string;
  readonly clientId: string;
  /** The app's name: the actor in history for everything it writes. */
  readonly clientName: string;
  /** True when the user allowed `memory:read` only. */
  readonly readOnly: boolean;
  /** The resource the grant's tokens are bound to (this server's `/mcp`). */
  readonly resource: string;
  readonly created: number;
  readonly lastUsed: number | undefined;
  /** True when the app's changes are held for the user's review (memory/review.ts): the consent page's third choice. */
  readonly review: boolean;
}

export type GrantSecretKind = 'code' | 'access' | 'refresh';

/** An authorization code, access token or refresh token of a grant, kept hashed. */
export interface GrantSecretRecord {
  /** Hex SHA-256 of the secret. */
  readonly hash: string;
  readonly grantId: string;
  readonly kind: GrantSecretKind;
  readonly created: number;
  readonly expires: number;
  /** When a code or refresh token was first redeemed; undefined until then (and always for access tokens). */
  readonly used: number | undefined;
  /** What the service needs to check a redemption (a code's redirect URI and PKCE challenge), JSON; '' when nothing. */
  readonly data: string;
}

/** The outcome of redeeming a code or refresh token once. */
export interface Redemption {
  readonly secret: GrantSecretRecord;
  /** False when it had been redeemed before: the service treats that as theft and revokes the grant. */
  readonly first: boolean;
}

/**
 * OAuth clients, grants and their secrets, as an adapter of node-oidc-provider keeps them:
 * save, find, consume, revoke by grant (the grant's secrets go with it), and the sweeps of
 * what expired or was never used. Rules (rotation, expiry checks, PKCE, reuse detection)
 * are the OAuth services'; the store only offers the atomic steps they need.
 */
export interface OAuthStore {
  /** Keeps a registered client; a taken id is refused with CONFLICT (duplicateKeyError). */
  saveClient(client: ClientRecord): Promise<void>;
  findClient(id: string): Promise<ClientRecord | undefined>;
  /** How many clients have registered (registration is capped). */
  countClients(): Promise<number>;
  /**
   * Records that the consent page was shown for the client at `at` (a person may be
   * deciding whether to allow it); an unknown id is ignored.
   */
  markClientShown(id: string, at: number): Promise<void>;
  /**
   * Deletes the clients that registered before `registeredBefore`, that no grant names and
   * whose consent page was not shown since `shownBefore` (registration is open and capped,
   * and some clients register anew each time); returns how many.
   */
  removeUnusedClients(registeredBefore: number, shownBefore: number): Promise<number>;
  /**
   * Deletes up to `count` of the clients no grant names and whose consent page was not
   * shown since `shownBefore`, oldest first (by registration time, then id), whenever they
   * registered: at the cap, an unused registration gives way to a new one, and neither a
   * client someone allowed nor one a person may be deciding about does. Returns how many.
   */
  removeOldestUnusedClients(count: number, shownBefore: number): Promise<number>;

  /**
   * Keeps a new grant together with its first secret (the authorization code), atomically,
   * if its user has an account (accounts port), checked in the same atomic step: a grant
   * saved as its user is removed is either refused or there for the removal to revoke.
   * False, keeping nothing, when the user has no account.
   */
  saveGrant(grant: GrantRecord, code: GrantSecretRecord): Promise<boolean>;
  findGrant(id: string): Promise<GrantRecord | undefined>;
  /** Every grant, oldest first. */
  listGrants(): Promise<GrantRecord[]>;
  touchGrant(id: string, at: number): Promise<void>;
  /** Puts the grant in review mode or out of it; false when no such grant. Takes effect for the next request. */
  setGrantReview(id: string, review: boolean): Promise<boolean>;
  /** Deletes the grant and every secret it holds at once; false when no such grant. */
  revokeByGrantId(id: string): Promise<boolean>;
  /** Revokes every grant of `user` (with their secrets) in one atomic step; returns how many. */
  revokeByUser(user: string): Promise<number>;

  /** Adds secrets to a live grant, atomically; false (adding nothing) when the grant is gone. */
  saveSecrets(grantId: string, secrets: readonly GrantSecretRecord[]): Promise<boolean>;
  /** The secret with this hash, expired or not. */
  findSecret(hash: string): Promise<GrantSecretRecord | undefined>;
  /**
   * Marks a code or refresh token used at `at`, atomically: exactly one of any number of
   * concurrent redemptions (across processes) sees `first: true`. Undefined when unknown.
   */
  consume(hash: string, at: number): Promise<Redemption | undefined>;
  /**
   * Deletes the secrets that expired at or before `now` and, in the same atomic step, every
   * grant left holding no secret (its code expired unexchanged, or all its tokens expired):
   * such a grant can never be used again. A grant is added together with its code, so one
   * being created is never caught without a secret. Returns how many of each were deleted.
   */
  removeExpired(now: number): Promise<ExpiredRemoval>;
}

/** What removeExpired deleted. */
export interface ExpiredRemoval {
  readonly secrets: number;
  readonly grants: number;
}
