import { ALL_SCOPES } from "../auth/scopes";
import { SUPPORTED_GRANT_TYPES } from "../identity/oauth/token-endpoint";

export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const DEVICE_AUTHORIZATION_PATH = "/oauth/device_authorization";
export const REVOCATION_PATH = "/oauth/revoke";
export const DEVICE_VERIFICATION_PATH = "/oauth/device";
export const DEVICE_DECISION_PATH = "/oauth/device/decision";

const CLIENT_AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic"];

/**
 * `GET /.well-known/oauth-authorization-server` (RFC 8414): every endpoint as an absolute
 * URL on PUBLIC_URL, which is also the issuer.
 */
export function serverMetadata(publicUrl: string) {
  return {
    issuer: publicUrl,
    authorization_endpoint: publicUrl + AUTHORIZE_PATH,
    token_endpoint: publicUrl + TOKEN_PATH,
    device_authorization_endpoint: publicUrl + DEVICE_AUTHORIZATION_PATH,
    revocation_endpoint: publicUrl + REVOCATION_PATH,
    response_types_supported: ["code"],
    grant_types_supported: SUPPORTED_GRANT_TYPES,
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    scopes_supported: [...ALL_SCOPES],
  };
}
