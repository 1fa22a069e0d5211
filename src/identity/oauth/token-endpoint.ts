import { assertGrantAllowed, authenticateClient } from "./client-authentication";
import { exchangeDeviceCode } from "./device-code-grant";
import { AUTHORIZATION_CODE_GRANT, DEVICE_CODE_GRANT, REFRESH_TOKEN_GRANT, type OauthClient } from "./oauth-client";
import { ApiError } from "../../errors/api-error";
import type { OauthDeps } from "./oauth-deps";
import { requireParam } from "./oauth-params";
import { refreshGrant } from "./refresh-grant";
import { exchangeAuthorizationCode } from "./authorization-code-grant";
import type { TokenResponse } from "./grant-issuer";

type GrantHandler = (deps: OauthDeps, client: OauthClient, params: Map<string, string>) => Promise<TokenResponse>;

const GRANTS: ReadonlyMap<string, GrantHandler> = new Map([
  [DEVICE_CODE_GRANT, exchangeDeviceCode],
  [AUTHORIZATION_CODE_GRANT, exchangeAuthorizationCode],
  [REFRESH_TOKEN_GRANT, refreshGrant],
]);

export const SUPPORTED_GRANT_TYPES = [...GRANTS.keys()];

/**
 * `POST /oauth/token`: the grant type, then the client (authenticated when it is
 * confidential, and allowed this grant type), then the grant itself.
 */
export async function handleTokenRequest(deps: OauthDeps, params: Map<string, string>, headers: Headers): Promise<TokenResponse> {
  const grantType = requireParam(params, "grant_type");
  const handler = GRANTS.get(grantType);
  if (!handler) throw new ApiError("unsupported_grant_type", "supported grant types: " + SUPPORTED_GRANT_TYPES.join(", "));
  const client = await authenticateClient(deps.sql, params, headers);
  assertGrantAllowed(client, grantType);
  return handler(deps, client, params);
}
