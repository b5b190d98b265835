/**
 * Discovery (DESIGN §8): the protected resource metadata (RFC 9728) that the 401 of /mcp
 * points to, and the authorization server metadata (RFC 8414, also served where OpenID
 * clients look). Every URL in them is built from the public URL (--public-url, or the
 * listening origin), never from request headers, which a client or a proxy could forge.
 */

import { SCOPES } from '../types.js';

/** The public URL without its trailing slash: what the issuer and every endpoint start with. */
function base(publicUrl: URL): string {
  return publicUrl.href.replace(/\/+$/, '');
}

/** The issuer identifier (RFC 8414 §2), also returned as `iss` with every authorization response (RFC 9207). */
export function issuerOf(publicUrl: URL): string {
  return base(publicUrl);
}

/** The protected resource: this server's MCP endpoint, which its tokens are bound to (RFC 8707). */
export function resourceOf(publicUrl: URL): string {
  return `${base(publicUrl)}/mcp`;
}

/** Where the metadata of the `/mcp` resource is, as the 401 challenge names it (RFC 9728 §5.1). */
export function resourceMetadataUrlOf(publicUrl: URL): string {
  return `${base(publicUrl)}/.well-known/oauth-protected-resource/mcp`;
}

export function protectedResourceMetadata(publicUrl: URL) {
  return {
    resource: resourceOf(publicUrl),
    authorization_servers: [issuerOf(publicUrl)],
    scopes_supported: SCOPES,
    bearer_methods_supported: ['header'],
  };
}

export function authorizationServerMetadata(publicUrl: URL) {
  const at = base(publicUrl);
  return {
    issuer: issuerOf(publicUrl),
    authorization_endpoint: `${at}/authorize`,
    token_endpoint: `${at}/token`,
    registration_endpoint: `${at}/register`,
    revocation_endpoint: `${at}/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: SCOPES,
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}
