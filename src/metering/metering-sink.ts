import type { Sql } from "../db/connect-database";
import { runQuery } from "../db/queries/run-query";
import { log } from "../observability/log";
import type { BillingAuditRow, LedgerRow, MeteringSink, RequestRow, UsageFrameRow } from "./metering-rows";
import type { BatchTable, WriteBuffer } from "./write-buffer";

/** One statement per table per flush: the whole batch travels as one JSON parameter. */
function jsonBatch<Row>(name: string, query: string): BatchTable<Row> {
  return {
    name,
    async write(sql: Sql, rows: Row[]) {
      await runQuery(sql, query, [JSON.stringify(rows)]);
    },
    onDrop(rows, reason) {
      // Never the rows themselves: they carry no prompts, but keep logs to counts.
      log.error("metering rows dropped", { table: name, count: rows.length, reason });
    },
  };
}

/**
 * The metering write path: request records, usage frames, billing audit and ledger
 * entries go into the batched write buffer, registered in this order so one flush
 * writes a request's rows in one transaction.
 */
export function createMeteringSink(buffer: WriteBuffer): MeteringSink {
  const request = buffer.register(jsonBatch<RequestRow>("requests", "insertRequestRecords"));
  const usageFrame = buffer.register(jsonBatch<UsageFrameRow>("usage_frames", "insertUsageFrames"));
  const billingAudit = buffer.register(jsonBatch<BillingAuditRow>("billing_audit", "insertBillingAudit"));
  const ledger = buffer.register(jsonBatch<LedgerRow>("ledger_entries", "applyLedgerEntries"));
  return {
    request: (row) => void request(row),
    usageFrame: (row) => void usageFrame(row),
    billingAudit: (row) => void billingAudit(row),
    ledger: (row) => void ledger(row),
  };
}
