import { isUniqueViolation } from "../../db/errors";
import { insertDeviceCode, sweepDeviceCodes } from "../../db/queries/oauth-device-codes";
import { sweepAuthorizationCodes } from "../../db/queries/oauth-authorization-codes";
import { assertGrantAllowed, authenticateClient } from "./client-authentication";
import { DEVICE_CODE_GRANT } from "./oauth-client";
import { ApiError } from "../../errors/api-error";
import type { OauthDeps } from "./oauth-deps";
import { grantableScopes, requestedScopes } from "./issued-scopes";
import { mintDeviceCode } from "./oauth-secrets";
import { newUserCode } from "./user-code";

/** RFC 8628 §3.2 device authorization response. */
export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/**
 * How long expired codes are kept before they are swept: a device still polling an
 * expired code hears `expired_token`, not `invalid_grant`.
 */
const SWEEP_GRACE_MS = 60 * 60 * 1000;

/**
 * `POST /oauth/device_authorization`: a device code for the device to poll with and a
 * user code for the person to enter at the verification page. The requested scopes are
 * kept as asked; the approval narrows them (issued-scopes.ts). A request for nothing this
 * client could ever be granted is refused now, not after the person approved it.
 */
export async function startDeviceAuthorization(deps: OauthDeps, params: Map<string, string>, headers: Headers): Promise<DeviceAuthorizationResponse> {
  const client = await authenticateClient(deps.sql, params, headers);
  assertGrantAllowed(client, DEVICE_CODE_GRANT);
  const requested = requestedScopes(params.get("scope"), client);
  if (!requested) throw new ApiError("invalid_scope", "unknown scope requested");
  if (grantableScopes(requested, client).length === 0) throw new ApiError("invalid_scope", "none of the requested scopes can be granted to this client");

  const now = Date.now();
  // Sweeping on the way in keeps both code tables small without a timer of their own.
  await sweepDeviceCodes(deps.sql, new Date(now - SWEEP_GRACE_MS));
  await sweepAuthorizationCodes(deps.sql, new Date(now - SWEEP_GRACE_MS));
  const lifetimeSecs = deps.lifetimes.deviceCodeSecs;
  for (let attempt = 0; ; attempt++) {
    const deviceCode = mintDeviceCode();
    const userCode = newUserCode();
    try {
      await insertDeviceCode(deps.sql, {
        deviceCodeHash: deviceCode.hash,
        userCode,
        clientId: client.clientId,
        oauthClientRef: client.ref,
        requestedScopes: requested,
        intervalSecs: deps.lifetimes.devicePollIntervalSecs,
        expiresAt: new Date(now + lifetimeSecs * 1000),
      });
    } catch (error) {
      // A user code already taken (one in 10^10 per live code): draw another.
      if (isUniqueViolation(error) && attempt < 5) continue;
      throw error;
    }
    const verificationUri = `${deps.publicUrl}/oauth/device`;
    return {
      device_code: deviceCode.value,
      user_code: userCode,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
      expires_in: lifetimeSecs,
      interval: deps.lifetimes.devicePollIntervalSecs,
    };
  }
}
