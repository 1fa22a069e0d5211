import { ApiError, badRequest, notFound } from "../../errors/api-error";
import { addressKey, USER_CODE_PER_ADDRESS, type ThrottleKey } from "../auth-throttle";
import { findLiveNamespace } from "../../db/queries/namespaces";
import { decideDeviceCode as recordDecision, findDeviceCodeByUserCode, type DeviceCodeByUserCode } from "../../db/queries/oauth-device-codes";
import type { Approver } from "./approver";
import { findOauthClient, type OauthClient } from "./oauth-client";
import type { OauthDeps } from "./oauth-deps";
import { issuedScopes } from "./issued-scopes";
import { normalizeUserCode } from "./user-code";

/**
 * The person's side of the device flow (RFC 8628 §3.3), as plain functions over
 * `OauthDeps`: the console's pages and `POST /oauth/device/decision` both call them.
 * Every lookup of a user code is counted against the client address before it runs
 * (auth-throttle.ts `take`) and given back when the code exists, so concurrent guesses
 * get no more lookups than the limit; a locked address gets 429 before any lookup.
 */

/** A device code waiting for a decision, as the verification page shows it. */
export interface PendingDevice {
  /** As shown to the person: `XXXX-XXXX`. */
  userCode: string;
  clientId: string;
  clientName: string;
  /** The scopes the device asked for; the approval grants what the approver holds of them. */
  scopes: string[];
  expiresAt: Date;
}

export interface DeviceDecisionInput {
  /** As typed: any case, with or without the dash. */
  userCode: string;
  approver: Approver;
  /** The namespace the grant is bound to; not needed to deny. */
  namespaceId: string | null;
  approve: boolean;
  /** The client address, for the guessing throttle (`clientAddress(request)`). */
  address: string;
}

const throttleKeys = (address: string): ThrottleKey[] => [addressKey(USER_CODE_PER_ADDRESS, address)];

/** The code row and its client when the typed code exists; a guess counts a failure. */
async function lookUp(deps: OauthDeps, typed: string, address: string): Promise<{ row: DeviceCodeByUserCode; client: OauthClient | undefined } | undefined> {
  await deps.throttle.take(throttleKeys(address));
  const userCode = normalizeUserCode(typed);
  const row = userCode === undefined ? undefined : await findDeviceCodeByUserCode(deps.sql, userCode);
  // A guess stays counted as taken.
  if (!row) return undefined;
  await deps.throttle.refund(throttleKeys(address));
  return { row, client: await findOauthClient(deps.sql, row.client_id) };
}

const isLive = (row: DeviceCodeByUserCode) => row.status === "pending" && row.expires_at.getTime() > Date.now();

/** The pending, unexpired device code a user code names; undefined otherwise. */
export async function describeDeviceCode(deps: OauthDeps, userCode: string, address: string): Promise<PendingDevice | undefined> {
  const found = await lookUp(deps, userCode, address);
  if (!found || !found.client || !isLive(found.row)) return undefined;
  return {
    userCode: found.row.user_code,
    clientId: found.client.clientId,
    clientName: found.client.clientName,
    scopes: found.row.requested_scopes,
    expiresAt: found.row.expires_at,
  };
}

/**
 * Approves or denies a device code. An approval binds the grant to `namespaceId` (live,
 * and the approver's account's: else 404 namespace) and fixes its scopes: requested ∩
 * the approver's ∩ the client's, never a control-plane scope; when that leaves nothing,
 * the approval is refused (403) and the code stays pending. An unknown, expired or
 * already decided code is a 400 `bad_request`.
 */
export async function decideDeviceCode(deps: OauthDeps, input: DeviceDecisionInput): Promise<"approved" | "denied"> {
  const found = await lookUp(deps, input.userCode, input.address);
  if (!found || !found.client) throw badRequest("unknown user code");
  const { row, client } = found;
  if (row.status !== "pending") throw badRequest("this user code was already used");
  if (row.expires_at.getTime() <= Date.now()) throw badRequest("this user code has expired; start the sign-in again");
  let namespaceId: string | null = null;
  let scopes: string[] | null = null;
  if (input.approve) {
    if (input.namespaceId === null || !(await findLiveNamespace(deps.sql, input.namespaceId, input.approver.accountId))) throw notFound("namespace");
    namespaceId = input.namespaceId;
    scopes = issuedScopes(row.requested_scopes, input.approver.scopes, client.allowedScopes);
    if (scopes.length === 0) {
      throw new ApiError("permission_denied", `the approving credential holds none of the requested scopes (${row.requested_scopes.join(" ")})`);
    }
  }
  const status = input.approve ? "approved" : "denied";
  const decided = await recordDecision(deps.sql, { userCode: row.user_code, status, accountId: input.approver.accountId, namespaceId, scopes, now: new Date() });
  if (!decided) throw badRequest("this user code was already used or has expired");
  return status;
}
