import { CliError } from "./cli-error";
import { errorDescription, oauthErrorCode, sendRequest } from "./http-client";
import { CLI_CLIENT_ID, type OauthEndpoints } from "./oauth-metadata";

const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/** RFC 8628 §3.2: the interval when the server names none. */
const DEFAULT_INTERVAL_S = 5;
/** RFC 8628 §3.5: each slow_down adds five seconds. */
const SLOW_DOWN_STEP_MS = 5_000;
const MAX_JITTER_MS = 500;

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string | undefined;
  expires_in: number;
  interval: number;
}

/** Starts a device authorization (RFC 8628 §3.1) for the CLI's public client. */
export async function requestDeviceCode(server: string, endpoints: OauthEndpoints, scope: string): Promise<DeviceAuthorization> {
  const response = await sendRequest(server, {
    method: "POST",
    path: endpoints.deviceAuthorization,
    form: { client_id: CLI_CLIENT_ID, scope },
  });
  if (response.status !== 200) throw new CliError(`the server refused to start a sign-in: ${errorDescription(response)}`);
  const body = (response.body ?? {}) as Record<string, unknown>;
  const { device_code, user_code, verification_uri, verification_uri_complete, expires_in, interval } = body;
  if (typeof device_code !== "string" || typeof user_code !== "string" || typeof verification_uri !== "string" || typeof expires_in !== "number") {
    throw new CliError("the server's device authorization answer lacks device_code, user_code, verification_uri or expires_in");
  }
  return {
    device_code,
    user_code,
    verification_uri,
    verification_uri_complete: typeof verification_uri_complete === "string" ? verification_uri_complete : undefined,
    expires_in,
    interval: typeof interval === "number" && interval > 0 ? interval : DEFAULT_INTERVAL_S,
  };
}

/**
 * Polls the token endpoint (RFC 8628 §3.4–3.5) until the code is approved, refused or
 * expired: every `interval` seconds plus up to half a second of jitter (so many CLIs
 * started together do not poll in step), five seconds slower after each `slow_down`,
 * and never past `expires_in`. Resolves with the token response body.
 */
export async function pollForToken(server: string, endpoints: OauthEndpoints, authorization: DeviceAuthorization): Promise<unknown> {
  const deadline = Date.now() + authorization.expires_in * 1000;
  let intervalMs = authorization.interval * 1000;
  for (;;) {
    const wait = intervalMs + Math.floor(Math.random() * (MAX_JITTER_MS + 1));
    if (Date.now() + wait >= deadline) throw expired();
    await Bun.sleep(wait);
    const response = await sendRequest(server, {
      method: "POST",
      path: endpoints.token,
      form: { grant_type: DEVICE_CODE_GRANT, device_code: authorization.device_code, client_id: CLI_CLIENT_ID },
    });
    if (response.status === 200) return response.body;
    const code = oauthErrorCode(response);
    switch (code) {
      case "authorization_pending":
        continue;
      case "slow_down":
        intervalMs += SLOW_DOWN_STEP_MS;
        continue;
      case "access_denied":
        throw new CliError("the sign-in was denied");
      case "expired_token":
        throw expired();
      default:
        throw new CliError(`sign-in failed: ${errorDescription(response)}`);
    }
  }
}

function expired(): CliError {
  return new CliError("the code expired before it was approved", "run `switchyard login` again");
}
