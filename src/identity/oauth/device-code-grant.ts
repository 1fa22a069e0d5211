import type { Sql } from "../../db/connect-database";
import { consumeDeviceCode, lockDeviceCode, recordDevicePoll } from "../../db/queries/oauth-device-codes";
import { sha256 } from "../../auth/tokens";
import type { OauthClient } from "./oauth-client";
import { ApiError } from "../../errors/api-error";
import type { OauthDeps } from "./oauth-deps";
import { issueGrant, type TokenResponse } from "./grant-issuer";
import { requireParam } from "./oauth-params";

/** RFC 8628 §3.5: what the interval grows by on every `slow_down`. */
const SLOW_DOWN_STEP_SECS = 5;

type PollOutcome = { tokens: TokenResponse } | { error: ApiError };

/**
 * The device polls `POST /oauth/token` with its device code. Pending: polled sooner than
 * the interval is `slow_down` (and the interval grows by 5 s, stored, so every instance
 * enforces it), else `authorization_pending`. Approved: the grant is created and the
 * code consumed in one transaction, so two polls racing get one grant between them.
 */
export async function exchangeDeviceCode(deps: OauthDeps, client: OauthClient, params: Map<string, string>): Promise<TokenResponse> {
  const hash = sha256(requireParam(params, "device_code"));
  const outcome = await deps.sql.begin(async (transaction): Promise<PollOutcome> => {
    const tx = transaction as unknown as Sql;
    const code = await lockDeviceCode(tx, hash);
    if (!code || code.client_id !== client.clientId) return { error: new ApiError("invalid_grant", "unknown device code") };
    if (code.status === "consumed") return { error: new ApiError("invalid_grant", "this device code was already exchanged") };
    const now = Date.now();
    if (code.expires_at.getTime() <= now) return { error: new ApiError("expired_token", "the device code expired; start again") };
    if (code.status === "denied") return { error: new ApiError("access_denied", "the request was denied") };
    if (code.status === "pending") {
      const tooSoon = code.last_polled_at !== null && now - code.last_polled_at.getTime() < code.interval_secs * 1000;
      const interval = tooSoon ? code.interval_secs + SLOW_DOWN_STEP_SECS : code.interval_secs;
      await recordDevicePoll(tx, hash, new Date(now), interval);
      return tooSoon
        ? { error: new ApiError("slow_down", `polling too often; wait ${interval} seconds between polls`) }
        : { error: new ApiError("authorization_pending", "the request has not been approved yet") };
    }
    const { grantId, response } = await issueGrant(
      tx,
      { accountId: code.account_id!, namespaceId: code.namespace_id!, clientId: client.clientId, oauthClientRef: client.ref, scopes: code.scopes! },
      deps.lifetimes,
    );
    await consumeDeviceCode(tx, hash, grantId);
    return { tokens: response };
  });
  if ("error" in outcome) throw outcome.error;
  return outcome.tokens;
}
