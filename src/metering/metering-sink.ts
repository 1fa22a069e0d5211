import type { Sql } from "../db/connect-database";
import { copyBinaryInto, binaryRowsEncoder, type BinaryColumnType, type BinaryRowsEncoder } from "../db/copy-binary";
import { copyInto, copyLineWriter, type CopyColumnKind, type CopyFollowUps } from "../db/copy-rows";
import { inSendOrder } from "../db/in-send-order";
import { jsonRowsWriter } from "../db/json-rows";
import { applyLedgerEntries, applyLedgerTotals, insertRequestRecords, type JsonBatchInsert } from "../db/queries/metering";
import { addLedgerUsage, addRequestUsage } from "../db/queries/usage-rollups";
import { lockWalletsThenLeases } from "../db/queries/wallet-locks";
import { log } from "../observability/log";
import type { LedgerRow, MeteringSink, RequestRow } from "./metering-rows";
import type { RowRouter } from "../db/batch/sharded-write-buffer";
import type { BatchTable, DropReason } from "../db/batch/write-buffer";
import { insertedRows, ledgerUsageTotals, requestUsageDeltas } from "./usage-rollups";

/**
 * A table's columns in order, and which hold JSON or arrays: for its COPY lines and its
 * JSON batches; and every column's type, for binary COPY.
 */
interface CopyTarget<Row> {
  table: string;
  columns: readonly (keyof Row & string)[];
  kinds: Partial<Record<keyof Row & string, CopyColumnKind>>;
  types: Record<keyof Row & string, BinaryColumnType>;
}

/**
 * One statement per table per flush. First attempts of append-only tables use COPY
 * (PostgreSQL spends about half the CPU it spends on the insert); after a failed flush,
 * and on the embedded database (whose socket bridge has no COPY), the named
 * `insert … from json_to_recordset($1)` statement (src/db/queries/metering.ts),
 * idempotent on the record id, takes the whole batch as one JSON parameter. Both render every value by the same rule
 * (src/db/storable-text.ts), so no text a client or upstream sent can make a row
 * unwritable. Rows are grouped by request record id: if the database refuses a batch
 * anyway, a request's rows are kept together while the bad ones are isolated.
 */
function batchTable<Row>(name: string, insertJson: JsonBatchInsert, target: CopyTarget<Row>, useCopy: boolean, recordIdOf: (row: Row) => string): CopyBatchTable<Row> {
  const copyRows = useCopy ? copyWriter(target) : undefined;
  const jsonRows = jsonRowsWriter(target.columns, target.kinds);
  return {
    name,
    streamsWholeBatch: copyRows !== undefined,
    async write(sql: Sql, rows: Row[], retry: boolean, then?: CopyFollowUps) {
      if (copyRows !== undefined && !retry) {
        await copyRows(sql, rows, then);
        return;
      }
      await insertJson(sql, jsonRows(rows));
    },
    onDrop: logDropped(name),
    groupKey: recordIdOf,
  };
}

/** A batch table whose first attempt's COPY carries the statements that follow it (copyInto's `then`). */
interface CopyBatchTable<Row> extends BatchTable<Row> {
  write(sql: Sql, rows: Row[], retry: boolean, then?: CopyFollowUps): Promise<void>;
}

function logDropped(table: string): (rows: readonly unknown[], reason: DropReason) => void {
  return (rows, reason) => {
    // Never the rows themselves: they carry no prompts, but keep logs to counts.
    log.error("metering rows dropped", { table, count: rows.length, reason });
  };
}

/**
 * Writes rows of one table with one binary COPY (src/db/copy-binary.ts), or, for a batch
 * with a value that has no exact binary form, with text COPY lines, each rendered by a
 * line writer compiled once. `then` makes the statements that follow it in the flush's
 * transaction, sent in the round trip that confirms the COPY (copyInto).
 */
function copyWriter<Row>(copy: CopyTarget<Row>): (sql: Sql, rows: Row[], then?: CopyFollowUps) => Promise<void> {
  const line = copyLineWriter(copy.columns, copy.kinds);
  const encode = binaryRowsEncoder(copy.columns, copy.types);
  return async (sql, rows, then) => {
    const first = encode(rows.length <= ENCODE_CHUNK_ROWS ? rows : rows.slice(0, ENCODE_CHUNK_ROWS));
    if (first === undefined) return copyInto(sql, copy.table, copy.columns, rows.map(line), "text", then);
    await copyBinaryInto(sql, copy.table, copy.columns, encodedChunks(rows, first, encode), then);
  };
}

/**
 * A whole flush arrives at once (streamsWholeBatch): its rows encoded a chunk at a time,
 * each while PostgreSQL ingests the one before. A later chunk with a value that has no
 * exact binary form aborts the COPY, and so the flush, which is retried with the insert
 * statements, where PostgreSQL judges every value (and isolateRefusedRows the refused).
 */
function* encodedChunks<Row>(rows: Row[], first: Uint8Array, encode: BinaryRowsEncoder<Row>): Generator<Uint8Array> {
  yield first;
  for (let start = ENCODE_CHUNK_ROWS; start < rows.length; start += ENCODE_CHUNK_ROWS) {
    const tuples = encode(rows.slice(start, start + ENCODE_CHUNK_ROWS));
    if (tuples === undefined) throw new Error(`${rows.length} metering rows: a value has no exact binary COPY form; the flush is retried with the insert statements`);
    yield tuples;
  }
}

/**
 * Rows encoded into one buffer. Encoding holds the request thread (15–20 µs a record at
 * steady state), and the event loop can turn only between chunks: 100 rows are ~2 ms,
 * where 1,000 held it for up to 20 ms and every request waiting behind it
 * (test/bench/HISTORY.md, 2026-11-29 00:25). copyInto turns it once its slice is spent
 * (COPY_SLICE_MS, src/db/copy-rows.ts). The extra chunk writes cost nothing measurable.
 */
const ENCODE_CHUNK_ROWS = 100;

const REQUEST_COPY: CopyTarget<RequestRow> = {
  table: "requests",
  columns: [
    "id", "request_id", "account_id", "namespace_id", "api_key_id", "oauth_token_id", "status", "status_code", "billing_status",
    "model_id", "provider_id", "provider_model_id", "routing_profile", "funding_source", "streamed",
    "finish_reason", "first_token_kind", "prompt_tokens", "completion_tokens", "reasoning_tokens",
    "cache_read_tokens", "cache_write_tokens", "final_charge_micro_usd", "request_duration_ms",
    "upstream_duration_ms", "generation_duration_ms", "ttft_ms", "used_capabilities", "usage_evidence",
    "warnings", "attempts", "charge_audit", "created_at", "completed_at",
  ],
  kinds: { used_capabilities: "text[]", usage_evidence: "json", warnings: "json", attempts: "json", charge_audit: "json" },
  types: {
    id: "text", request_id: "text", account_id: "text", namespace_id: "text", api_key_id: "text", oauth_token_id: "text", status: "text", status_code: "int4", billing_status: "text",
    model_id: "text", provider_id: "text", provider_model_id: "text", routing_profile: "text", funding_source: "text", streamed: "bool",
    finish_reason: "text", first_token_kind: "text", prompt_tokens: "int4", completion_tokens: "int4", reasoning_tokens: "int4",
    cache_read_tokens: "int4", cache_write_tokens: "int4", final_charge_micro_usd: "int8", request_duration_ms: "int4",
    upstream_duration_ms: "int4", generation_duration_ms: "int4", ttft_ms: "int4", used_capabilities: "text[]", usage_evidence: "json",
    warnings: "json", attempts: "json", charge_audit: "json", created_at: "timestamptz", completed_at: "timestamptz",
  },
};

const LEDGER_COPY: CopyTarget<LedgerRow> = {
  table: "ledger_entries",
  columns: ["id", "account_id", "namespace_id", "request_record_id", "kind", "amount_micro_usd", "released_micro_usd", "lease_id"],
  kinds: {},
  types: { id: "text", account_id: "text", namespace_id: "text", request_record_id: "text", kind: "text", amount_micro_usd: "int8", released_micro_usd: "int8", lease_id: "text" },
};

/**
 * Request records, and their sums added to the usage rollups (migration 0034) in the same
 * transaction: so the rollups are exact, never eventual, and a flush that rolls back takes
 * its sums with it. A first attempt's COPY inserted every row or failed whole; a retry
 * adds only the records its insert returned, since an earlier attempt may have committed
 * the others (and their sums with them).
 */
function requestTable(copy: boolean): BatchTable<RequestRow> {
  const copyRows = copy ? copyWriter(REQUEST_COPY) : undefined;
  const jsonRows = jsonRowsWriter(REQUEST_COPY.columns, REQUEST_COPY.kinds);
  return {
    name: "requests",
    streamsWholeBatch: copyRows !== undefined,
    onDrop: logDropped("requests"),
    groupKey: (row) => row.id,
    async write(sql: Sql, rows: RequestRow[], retry: boolean) {
      if (copyRows !== undefined && !retry) return copyRows(sql, rows, () => [addRequestUsage(sql, requestUsageDeltas(rows))]);
      const inserted = insertedRows(rows, await insertRequestRecords(sql, jsonRows(rows)));
      await addRequestUsage(sql, requestUsageDeltas(inserted));
    },
  };
}

/**
 * Ledger entries move wallet balances and leases. Their wallets and leases are locked
 * first, in the one order every grant and return also takes (lockWalletsThenLeases).
 * A first attempt COPYs the entries and applies their totals, summed here per account
 * and per lease, in one small statement sent with the COPY's confirmation (with the
 * usage rollup's, in one round trip); a retry takes `applyLedgerEntries`, which
 * moves a balance only for the entries it actually inserted, so a batch that had
 * committed can never debit twice.
 *
 * An entry the database refused (dead-lettered, see isolateRefusedRows) debits nothing,
 * but its charge still leaves the lease and the reservation, as applyLedgerTotals with a
 * zero amount: the money is not held back from the wallet, and the charge is kept in
 * metering_dead_letters for an operator to recover.
 */
function ledgerTable(copy: boolean): BatchTable<LedgerRow> {
  const base = batchTable<LedgerRow>("ledger_entries", applyLedgerEntries, LEDGER_COPY, copy, (row) => row.request_record_id ?? row.id);
  return {
    ...base,
    async write(sql: Sql, rows: LedgerRow[], retry: boolean) {
      const { amounts, released } = ledgerTotals(rows);
      // The entries' statement is sent behind the locks, not after their answer (PostgreSQL
      // still takes the locks first); a lock that failed is the cause of what failed after it.
      const locked = lockWalletsThenLeases(sql, amounts.keys(), released.keys());
      // The retry statement adds what it inserted to the usage rollup itself.
      const written = !copy || retry ? base.write(sql, rows, retry) : base.write(sql, rows, retry, () => [applyLedgerTotals(sql, amounts, released), addLedgerUsage(sql, ledgerUsageTotals(rows))]);
      await inSendOrder([locked, written]);
    },
    async onDeadLetter(sql: Sql, rows: readonly LedgerRow[]) {
      const { amounts, released } = ledgerTotals(rows);
      if (released.size === 0) return;
      await lockWalletsThenLeases(sql, amounts.keys(), released.keys());
      await applyLedgerTotals(sql, new Map([...amounts.keys()].map((account) => [account, 0])), released);
    },
  };
}

/** The entries' amounts summed per account, and what they release summed per lease. */
function ledgerTotals(rows: readonly LedgerRow[]): { amounts: Map<string, number>; released: Map<string, number> } {
  const amounts = new Map<string, number>();
  const released = new Map<string, number>();
  for (const row of rows) {
    amounts.set(row.account_id, (amounts.get(row.account_id) ?? 0) + row.amount_micro_usd);
    if (row.lease_id !== null) released.set(row.lease_id, (released.get(row.lease_id) ?? 0) + row.released_micro_usd);
  }
  return { amounts, released };
}

/**
 * The metering write path: request records (each with its usage frames and charge audit,
 * migration 0030) and ledger entries go into the batched write buffer, registered in this
 * order so one flush writes a request's rows in one transaction. Every row is keyed by its
 * account: with several buffers side by side, a request's rows (all of one account) stay
 * together, and an account's wallet and lease are only ever updated by one of them.
 */
export function createMeteringSink(buffer: RowRouter, options: { copy: boolean }): MeteringSink {
  const request = buffer.register(requestTable(options.copy), accountOf);
  const ledger = buffer.register(ledgerTable(options.copy), accountOf);
  return {
    request: (row) => void request(row),
    ledger: (row) => void ledger(row),
  };
}

function accountOf(row: { account_id: string }): string {
  return row.account_id;
}
