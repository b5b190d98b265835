/**
 * What the OAuth services share (DESIGN §8): the scopes, a client as the authorization
 * server knows it (registered, configured or described by a metadata document), an
 * authorization request once checked, what an authorization code remembers, and the
 * protocol's own error, whose `error` code is the stable code of RFC 6749 §5.2 / RFC 7591
 * §3.2.2 and whose description tells the client's developer how to call again.
 *
 * Engram is both the authorization server and the protected resource; the services are
 * `clients.ts` (who may ask), `authorization.ts` (the consent step: check a request,
 * approve or deny it) and `tokens.ts` (code exchange, refresh, revocation, and checking
 * an access token on every MCP request).
 */

export const SCOPE_READ = 'memory:read';
export const SCOPE_WRITE = 'memory:write';
export type Scope = typeof SCOPE_READ | typeof SCOPE_WRITE;
/** Every scope, as metadata and the 401 challenge list them. */
export const SCOPES: readonly Scope[] = [SCOPE_READ, SCOPE_WRITE];

/** How long each secret lives unless configured otherwise, in milliseconds. */
export const DEFAULT_TTLS = {
  code: 60_000,
  access: 60 * 60_000,
  refresh: 30 * 24 * 60 * 60_000,
} as const;

/** Where a client's description comes from. */
export type ClientKind = 'registered' | 'metadata-document' | 'configured';

/** A client the authorization server will talk to. */
export interface OAuthClient {
  /** The client_id: an opaque id for registered and configured clients, the document's HTTPS URL for CIMD. */
  readonly id: string;
  readonly kind: ClientKind;
  /** Shown on the consent page and recorded as the actor in history ("ChatGPT", "Claude"). */
  readonly name: string;
  /** Exact redirect URIs; a loopback one (http://127.0.0.1 / [::1] / localhost) matches any port (RFC 8252 §7.3). */
  readonly redirectUris: readonly string[];
}

/** An authorization request that passed every check, ready for the user's decision. */
export interface AuthorizationRequest {
  readonly client: OAuthClient;
  /** The redirect URI the client sent (matched against the registered ones). */
  readonly redirectUri: string;
  readonly state: string | undefined;
  /** PKCE S256 challenge (base64url of SHA-256 of the verifier). */
  readonly codeChallenge: string;
  /** What the client asks; defaults to every scope when it asks none. */
  readonly scopes: readonly Scope[];
  /** The resource the tokens will be bound to: always this server's `/mcp` URL. */
  readonly resource: string;
}

/** What an authorization code's secret record keeps in its `data` (JSON), for the token endpoint to check. */
export interface CodeData {
  readonly redirectUri: string;
  readonly codeChallenge: string;
}

/** OAuth's error codes (RFC 6749 §4.1.2.1, §5.2; RFC 7009; RFC 7591 §3.2.2; RFC 8707 §2). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'temporarily_unavailable'
  | 'server_error';

/** A refusal in the protocol's own terms; the HTTP door answers it as RFC 6749 §5.2 JSON (or a redirect, or a page). */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(
    readonly error: OAuthErrorCode,
    /** error_description: what was wrong and how to call again, for the client's developer. */
    readonly description: string,
  ) {
    super(description);
  }
}

export function isOAuthError(value: unknown): value is OAuthError {
  return value instanceof OAuthError;
}
