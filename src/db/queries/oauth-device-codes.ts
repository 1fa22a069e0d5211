import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

export type DeviceCodeStatus = "pending" | "approved" | "denied" | "consumed";

export interface NewDeviceCode {
  deviceCodeHash: Uint8Array;
  userCode: string;
  clientId: string;
  oauthClientRef: string | null;
  requestedScopes: readonly string[];
  intervalSecs: number;
  expiresAt: Date;
}

export async function insertDeviceCode(sql: Sql, code: NewDeviceCode): Promise<void> {
  await runQuery(sql, "insertDeviceCode", [
    code.deviceCodeHash,
    code.userCode,
    code.clientId,
    code.oauthClientRef,
    code.requestedScopes,
    code.intervalSecs,
    code.expiresAt,
  ]);
}

/** Deletes device codes that expired before `before`. */
export async function sweepDeviceCodes(sql: Sql, before: Date): Promise<void> {
  await runQuery(sql, "sweepDeviceCodes", [before]);
}

export interface DeviceCodeByUserCode {
  user_code: string;
  client_id: string;
  oauth_client_ref: string | null;
  requested_scopes: string[];
  status: DeviceCodeStatus;
  expires_at: Date;
  created_at: Date;
}

export async function findDeviceCodeByUserCode(sql: Sql, userCode: string): Promise<DeviceCodeByUserCode | undefined> {
  return runQueryRow<DeviceCodeByUserCode>(sql, "findDeviceCodeByUserCode", [userCode]);
}

export interface DeviceDecision {
  userCode: string;
  status: "approved" | "denied";
  accountId: string;
  namespaceId: string | null;
  scopes: readonly string[] | null;
  now: Date;
}

/** Records the decision on a pending, unexpired code; false when the code is not that (any more). */
export async function decideDeviceCode(sql: Sql, decision: DeviceDecision): Promise<boolean> {
  const rows = await runQuery(sql, "decideDeviceCode", [
    decision.userCode,
    decision.status,
    decision.accountId,
    decision.namespaceId,
    decision.scopes,
    decision.now,
  ]);
  return rows.length > 0;
}

export interface DeviceCodeRow {
  device_code_hash: Uint8Array;
  client_id: string;
  oauth_client_ref: string | null;
  status: DeviceCodeStatus;
  interval_secs: number;
  last_polled_at: Date | null;
  account_id: string | null;
  namespace_id: string | null;
  scopes: string[] | null;
  expires_at: Date;
}

/** In a transaction: a device code by its hash, locked for the poll that reads and updates it. */
export async function lockDeviceCode(tx: Sql, deviceCodeHash: Uint8Array): Promise<DeviceCodeRow | undefined> {
  return runQueryRow<DeviceCodeRow>(tx, "lockDeviceCode", [deviceCodeHash]);
}

export async function recordDevicePoll(tx: Sql, deviceCodeHash: Uint8Array, at: Date, intervalSecs: number): Promise<void> {
  await runQuery(tx, "recordDevicePoll", [deviceCodeHash, at, intervalSecs]);
}

export async function consumeDeviceCode(tx: Sql, deviceCodeHash: Uint8Array, grantId: string): Promise<void> {
  await runQuery(tx, "consumeDeviceCode", [deviceCodeHash, grantId]);
}
