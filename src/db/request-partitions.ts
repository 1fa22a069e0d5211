import type { Sql } from "./connect-database";
import { dropExpiredRequestPartitions, ensureRequestPartitions, requestsWithoutMonth } from "./queries/request-partitions";
import { pruneProviderRequestMinutes } from "./queries/usage-rollups";
import { pruneRefusalSampleMinutes } from "./queries/metering";
import { log } from "../observability/log";

/** Months created ahead of the current one: a quarter of slack if maintenance keeps failing. */
export const REQUEST_PARTITIONS_AHEAD = 3;

/** How long provider_request_minutes rows are kept (migration 0034). */
const PROVIDER_MINUTES_KEPT_MS = 24 * 3600 * 1000;

/** Maintenance runs at start and then this often. */
const MAINTENANCE_INTERVAL_MS = 24 * 3600 * 1000;

export interface PartitionMaintenance {
  /** Partitions created by this run. */
  created: string[];
  /** Partitions dropped by this run (retention). */
  dropped: string[];
}

/**
 * One maintenance run over the request table's monthly partitions (migration 0025): the
 * partitions of this month and the next REQUEST_PARTITIONS_AHEAD are created if missing,
 * then, with a retention of `retentionMonths`, every partition whose month ended at least
 * that many months ago is dropped (undefined: nothing is dropped), with its days in the usage
 * rollups; provider minutes and refusal sample minutes older than a day are pruned. Each step is one
 * transaction under an advisory lock in the database, so instances running it at once
 * create and drop each partition once; a step that cannot get its locks within 2 s fails
 * and is retried at the next run.
 */
export async function maintainRequestPartitions(sql: Sql, retentionMonths: number | undefined, now = new Date()): Promise<PartitionMaintenance> {
  const created = await ensureRequestPartitions(sql, now, REQUEST_PARTITIONS_AHEAD);
  const dropped = retentionMonths === undefined ? [] : await dropExpiredRequestPartitions(sql, now, retentionMonths);
  // The providers' view reads the last hour of these minutes; a day is kept, whatever the retention.
  await pruneProviderRequestMinutes(sql, new Date(now.getTime() - PROVIDER_MINUTES_KEPT_MS));
  // Only the current minute's refusal sample is ever claimed (migration 0036).
  await pruneRefusalSampleMinutes(sql, new Date(now.getTime() - PROVIDER_MINUTES_KEPT_MS));
  if (created.length > 0 || dropped.length > 0) log.info("request partitions maintained", { created, dropped });
  if (await requestsWithoutMonth(sql)) {
    log.warn("request records wait in requests_default: their month has no partition (a clock far off?); they move into it when it is created");
  }
  return { created, dropped };
}

/**
 * Runs maintainRequestPartitions now and daily (the timer does not keep the process
 * alive). A failed run is logged and retried the next day: months are created three
 * ahead, and a record whose month is missing still lands in the default partition.
 */
export function startRequestPartitionMaintenance(sql: Sql, retentionMonths: number | undefined): void {
  const run = () =>
    maintainRequestPartitions(sql, retentionMonths).catch((error: unknown) => {
      log.warn("request partition maintenance failed; retried at the next run", { error: error instanceof Error ? error.message : String(error) });
    });
  void run();
  setInterval(run, MAINTENANCE_INTERVAL_MS).unref();
}
