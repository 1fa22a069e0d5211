import type { Sql } from "../connect-database";
import { columns, runCommand, runQuery } from "./run-query";

/**
 * The metering tables' batch statements (sql/queries/metering.sql). Each insert takes a
 * whole batch as one JSON array (src/db/json-rows.ts) and is idempotent on Switchyard's
 * own ids: the retry path of a flush whose first attempt used COPY.
 */
export type JsonBatchInsert = (sql: Sql, rowsJson: string) => Promise<void>;

/** Inserts request records; resolves to the ids of those actually inserted (an earlier attempt may have committed the others). */
export async function insertRequestRecords(sql: Sql, rowsJson: string): Promise<string[]> {
  const rows = await runQuery<{ id: string }>(sql, "insertRequestRecords", [rowsJson]);
  return rows.map((row) => row.id);
}

/** Inserts ledger entries and moves balances and leases by the entries actually inserted. After lockWalletsThenLeases. */
export const applyLedgerEntries: JsonBatchInsert = async (sql, rowsJson) => {
  await runQuery(sql, "applyLedgerEntries", [rowsJson]);
};

/**
 * Applies ledger totals already summed per account (debits) and per lease (what leaves
 * the lease and the wallet's reservation), for entries written by COPY or dead-lettered.
 * After lockWalletsThenLeases, in the same transaction.
 */
export async function applyLedgerTotals(tx: Sql, amounts: ReadonlyMap<string, number>, released: ReadonlyMap<string, number>): Promise<void> {
  await runQuery(tx, "applyLedgerTotals", [[...amounts.keys()], [...amounts.values()], [...released.keys()], [...released.values()]]);
}

/** One row the database refused, as metering_dead_letters keeps it. */
export interface DeadLetter {
  table: string;
  /** The row's group key (a request record id), or null when it stands alone. */
  recordId: string | null;
  /** The row as escaped JSON. */
  rowValues: string;
  errorCode: string | null;
  errorMessage: string;
}

export async function insertDeadLetters(tx: Sql, letters: readonly DeadLetter[]): Promise<void> {
  await runQuery(tx, "insertMeteringDeadLetters", columns(letters, "table", "recordId", "rowValues", "errorCode", "errorMessage"));
}

/**
 * Refusals of one account, minute, status, namespace, API key and model that got no
 * record of their own (migration 0036).
 */
export interface RefusedRequestCount {
  accountId: string;
  /** The minute's start. */
  minute: Date;
  statusCode: number;
  namespaceId: string | null;
  apiKeyId: string | null;
  /** The catalog model a refusal at admission named; null before admission. */
  modelId: string | null;
  count: number;
}

/** Adds counts to refused_request_counts (each row's minute total grows by its count). */
export async function addRefusedRequestCounts(sql: Sql, counts: readonly RefusedRequestCount[]): Promise<void> {
  await runQuery(sql, "addRefusedRequestCounts", [
    ...columns(counts, "accountId"),
    counts.map((c) => c.minute.toISOString()),
    ...columns(counts, "statusCode", "namespaceId", "apiKeyId", "modelId", "count"),
  ]);
}

/**
 * Claims one of the account's `perMinute` refusal records of `minute` for this process:
 * true when it fits (every process and instance on the database shares the bound), false
 * when the minute's sample is full.
 */
export async function claimRefusalRecord(sql: Sql, accountId: string, minute: Date, perMinute: number): Promise<boolean> {
  const rows = await runQuery<{ recorded: number }>(sql, "claimRefusalRecord", [accountId, minute, perMinute]);
  return rows.length > 0;
}

/** Drops the sample claims of minutes before `before`. */
export function pruneRefusalSampleMinutes(sql: Sql, before: Date): Promise<number> {
  return runCommand(sql, "pruneRefusalSampleMinutes", [before]);
}
