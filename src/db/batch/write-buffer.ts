import type { Sql } from "../connect-database";
import { isDataRejection, sqlState } from "../errors";
import { log } from "../../observability/log";
import type { Counter, Metrics } from "../../observability/metrics";
import { tableCounter } from "./write-buffer-counters";
import { isolateRefusedRows } from "./isolate-refused-rows";
import { TableLane, type BatchTable, type Lane } from "./write-buffer-lane";

export type { BatchTable, DropReason } from "./write-buffer-lane";

export interface WriteBufferOptions {
  /** Longest a row waits before a flush starts. Default 25 ms. */
  flushIntervalMs?: number;
  /** Rows per statement (except a streamed first attempt: see BatchTable.streamsWholeBatch); a table reaching this many pending rows flushes at once. Default 1,000. */
  maxBatchRows?: number;
  /** Per table, pending plus in flight; beyond it new rows are refused. Default 100,000. */
  maxBufferedRows?: number;
  /** First retry delay after a failed flush, doubled per failure up to retryMaxMs. Default 50 ms. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** How long stop() keeps retrying an unreachable database before giving up. Default 10 s. */
  stopTimeoutMs?: number;
  metrics?: Metrics;
}

export interface WriteBufferStats {
  /** Rows not yet committed (pending and in flight), by table. */
  buffered: Record<string, number>;
  written: Record<string, number>;
  /** Rows refused by enqueue (buffer full, or after stop), by table. */
  rejected: Record<string, number>;
  /** Rows the database refused, moved to metering_dead_letters, by table. */
  deadLettered: Record<string, number>;
  /** Failed flush attempts since start. */
  failures: number;
}

const REJECT_LOG_EVERY_MS = 10_000;

/**
 * Buffered, batched writes for append-mostly rows (request records, usage frames,
 * ledger entries): callers enqueue synchronously in O(1) and never wait on the
 * database; a flush writes each table's rows with one multi-row statement per
 * `maxBatchRows` (one COPY for all of them, on a first attempt, when the table
 * `streamsWholeBatch`), all tables in ONE transaction, in registration order (parents
 * first, so foreign keys hold). Rows enqueued in the same synchronous turn — a request
 * record with its frames and ledger entries — are always in the same flush, so they
 * commit together or not at all.
 *
 * Failure: the whole flush rolls back and every taken row goes back to the front of its
 * table's buffer, in order, ahead of rows enqueued meanwhile; the next attempt waits
 * retryBaseMs doubling to retryMaxMs (never a hot loop) and writes them again, which
 * is why `write` must be idempotent. Nothing is lost while the process lives —
 * except by design when a table holds maxBufferedRows: then NEW rows are refused
 * (enqueue returns false, switchyard_write_rejected_rows_total, log.error, onDrop),
 * keeping the oldest rows, whose requests already happened, and memory bounded.
 * Rows the database refuses for their data (SQLSTATE class 22/23/54, isDataRejection)
 * would fail every retry and hold back every later row of the buffer, other accounts'
 * included. So such a flush does not wait for a retry: isolateRefusedRows splits it,
 * commits everything else (a request's rows still together) and moves the refused rows
 * to metering_dead_letters, counted in switchyard_metering_dead_letters_total. Any other
 * error (an outage: 08/57/3D…, a deadlock, a driver error) is retried as above, loudly
 * (switchyard_write_failures_total and switchyard_buffered_rows climb, each attempt
 * logs its SQLSTATE).
 *
 * Background timers are unref'd; stop()'s own waits are not, so an awaited stop()
 * finishes before the process exits.
 */
export class WriteBuffer {
  private readonly lanes: Lane[] = [];
  private readonly flushIntervalMs: number;
  private readonly maxBatchRows: number;
  private readonly maxBufferedRows: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly stopTimeoutMs: number;
  private readonly metrics: Metrics | undefined;
  private readonly rejectedRows: Counter | undefined;
  private readonly deadLetters: Counter | undefined;

  /** Pending rows of all tables (not in flight). */
  private pendingRows = 0;
  /** When pendingRows last went from 0 to 1 (performance.now()). */
  private firstPendingAt = 0;
  private inFlight: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDueAt = Number.POSITIVE_INFINITY;
  private consecutiveFailures = 0;
  private failures = 0;
  private stopping: Promise<void> | undefined;
  private stopped = false;
  /** Callers of whenWritten() waiting for rows not yet taken by a flush … */
  private waiting: Array<() => void> = [];
  /** … and for the rows of the flush running now. */
  private waitingOnRunning: Array<() => void> = [];

  constructor(
    private readonly sql: Sql,
    options: WriteBufferOptions = {},
  ) {
    this.flushIntervalMs = options.flushIntervalMs ?? 25;
    this.maxBatchRows = options.maxBatchRows ?? 1_000;
    this.maxBufferedRows = options.maxBufferedRows ?? 100_000;
    this.retryBaseMs = options.retryBaseMs ?? 50;
    this.retryMaxMs = options.retryMaxMs ?? 2_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    this.metrics = options.metrics;
    const metrics = options.metrics;
    this.rejectedRows = metrics && tableCounter(metrics, "switchyard_write_rejected_rows_total", "Rows refused by a full (or stopped) write buffer and never written, by table.");
    this.deadLetters =
      metrics && tableCounter(metrics, "switchyard_metering_dead_letters_total", "Rows the database refused for their data, moved to metering_dead_letters instead of written, by table.");
  }

  /** Adds a table (flushed after the ones registered before it); returns its enqueue function. */
  register<Row>(table: BatchTable<Row>): (row: Row) => boolean {
    if (this.lanes.some((lane) => lane.name === table.name)) throw new Error(`write buffer table "${table.name}" registered twice`);
    const lane = new TableLane(table);
    this.lanes.push(lane);
    this.metrics?.buffered.track([table.name], () => lane.pending + lane.inFlight);
    return (row: Row) => this.enqueue(lane, row);
  }

  private enqueue<Row>(lane: TableLane<Row>, row: Row): boolean {
    if (this.stopped || lane.pending + lane.inFlight >= this.maxBufferedRows) {
      this.reject(lane, row);
      return false;
    }
    const pending = lane.push(row);
    if (this.pendingRows++ === 0) {
      this.firstPendingAt = performance.now();
      if (this.idle()) this.schedule(this.flushIntervalMs);
    }
    if (pending === this.maxBatchRows && this.idle()) this.schedule(0);
    return true;
  }

  private reject<Row>(lane: TableLane<Row>, row: Row): void {
    lane.rejected++;
    this.rejectedRows?.inc([lane.name]);
    const reason = this.stopped ? "stopped" : "buffer_full";
    lane.drop([row], reason);
    // Loud, but one line per table per 10 s, not one per row of an overload.
    lane.rejectedSinceLog++;
    const now = performance.now();
    if (now - lane.lastRejectLogAt < REJECT_LOG_EVERY_MS) return;
    log.error("write buffer refused rows: they are lost", {
      table: lane.name,
      reason,
      rejected_rows: lane.rejectedSinceLog,
      max_buffered_rows: this.maxBufferedRows,
    });
    lane.lastRejectLogAt = now;
    lane.rejectedSinceLog = 0;
  }

  /** No flush running or waiting out a backoff, and not stopping: enqueue may schedule. */
  private idle(): boolean {
    return this.inFlight === undefined && this.consecutiveFailures === 0 && this.stopping === undefined;
  }

  private schedule(delayMs: number): void {
    if (this.stopping !== undefined) return; // stop() drives the last flushes itself
    const dueAt = performance.now() + delayMs;
    if (this.timer !== undefined) {
      if (this.timerDueAt <= dueAt) return;
      clearTimeout(this.timer);
    }
    this.timerDueAt = dueAt;
    this.timer = setTimeout(this.onTimer, delayMs);
    this.timer.unref();
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.timerDueAt = Number.POSITIVE_INFINITY;
    // Failures are counted, logged and rescheduled in afterFlush.
    this.runFlush().catch(() => {});
  };

  /**
   * Writes every row buffered when called (and any taken by a flush already running).
   * Concurrent calls share the running flush. Rejects if the write fails; the rows stay
   * buffered and the background retry continues.
   */
  async flush(): Promise<void> {
    if (this.inFlight !== undefined) await this.inFlight.catch(() => {});
    if (this.pendingRows > 0) await this.runFlush();
  }

  private runFlush(): Promise<void> {
    this.inFlight ??= this.flushOnce().finally(() => {
      this.inFlight = undefined;
      this.afterFlush();
    });
    return this.inFlight;
  }

  /**
   * Resolves once every row enqueued before the call is committed (at once when none is
   * pending). Never rejects; while the database is unreachable it waits, like the rows,
   * and stop() releases whoever still waits.
   */
  whenWritten(): Promise<void> {
    return new Promise((resolve) => this.onWritten(resolve));
  }

  /**
   * whenWritten without a promise, for the per-request path: `callback` runs once every
   * row enqueued before the call is committed — synchronously when none is pending.
   */
  onWritten(callback: () => void): void {
    if (this.pendingRows === 0 && this.inFlight === undefined) return callback();
    (this.pendingRows > 0 ? this.waiting : this.waitingOnRunning).push(callback);
  }

  private async flushOnce(): Promise<void> {
    const lanes = this.lanes.filter((lane) => lane.take() > 0);
    this.pendingRows = 0;
    // Everyone waiting now waits for the rows this flush has just taken.
    this.waitingOnRunning = this.waiting;
    this.waiting = [];
    if (lanes.length === 0) {
      this.releaseWaiting();
      return;
    }
    const retry = this.consecutiveFailures > 0;
    const startedAt = performance.now();
    try {
      await this.sql.begin(async (transaction) => {
        const tx = transaction as unknown as Sql;
        for (const lane of lanes) await lane.writeTaken(tx, this.maxBatchRows, retry);
      });
      this.metrics?.writeFlushDuration.observe([], (performance.now() - startedAt) / 1000);
    } catch (flushError) {
      this.failures++;
      for (const lane of lanes) this.metrics?.writeFailures.inc([lane.name]);
      // Rows the database refuses would fail every retry: write the rest without them.
      if (!isDataRejection(flushError)) this.failed(lanes, flushError);
      // No values: the SQLSTATE says what kind of data (isolateRefusedRows logs what it dead-letters).
      log.warn("write buffer flush refused by the database; writing it in parts to isolate the refused rows", { tables: lanes.map((lane) => lane.name), code: sqlState(flushError) });
      try {
        await isolateRefusedRows(this.sql, lanes, flushError, retry, { chunkRows: this.maxBatchRows, onDeadLetter: this.countDeadLetter });
      } catch (isolationError) {
        this.failed(lanes, isolationError);
      }
    }
    for (const lane of lanes) lane.commitTaken();
    this.releaseWaiting();
    if (this.consecutiveFailures > 0) log.info("write buffer flush recovered", { failed_attempts: this.consecutiveFailures });
    this.consecutiveFailures = 0;
  }

  private readonly countDeadLetter = (table: string): void => {
    this.deadLetters?.inc([table]);
  };

  /**
   * The flush failed for a reason a retry may fix: its rows not yet settled go back in
   * front of newer ones, to be retried with backoff. Throws `error`.
   */
  private failed(lanes: readonly Lane[], error: unknown): never {
    let rows = 0;
    for (const lane of lanes) {
      const before = lane.pending;
      lane.restoreTaken();
      rows += lane.pending - before;
    }
    this.pendingRows = this.lanes.reduce((sum, lane) => sum + lane.pending, 0);
    // The rows are pending again, and so are those waiting for them.
    this.waiting = this.waitingOnRunning.concat(this.waiting);
    this.waitingOnRunning = [];
    this.consecutiveFailures++;
    log.warn("write buffer flush failed; rows kept for retry", {
      tables: lanes.map((lane) => lane.name),
      rows,
      attempt: this.consecutiveFailures,
      retry_in_ms: this.retryDelayMs(),
      error: String(error),
      // SQLSTATE: 08/57/3D… is an outage. (22/23/54, the data refused, are isolated instead.)
      code: sqlState(error),
    });
    throw error;
  }

  private releaseWaiting(): void {
    const released = this.waitingOnRunning;
    this.waitingOnRunning = [];
    for (const resolve of released) resolve();
  }

  private afterFlush(): void {
    if (this.consecutiveFailures > 0) return this.schedule(this.retryDelayMs());
    if (this.pendingRows === 0) return;
    if (this.lanes.some((lane) => lane.pending >= this.maxBatchRows)) return this.schedule(0);
    this.schedule(Math.max(0, this.firstPendingAt + this.flushIntervalMs - performance.now()));
  }

  private retryDelayMs(): number {
    const exponent = Math.min(Math.max(this.consecutiveFailures - 1, 0), 30);
    return Math.min(this.retryBaseMs * 2 ** exponent, this.retryMaxMs);
  }

  /**
   * The shutdown path: no more timers; flushes until every row is written, including
   * rows enqueued while stopping, retrying with backoff for up to stopTimeoutMs. Then
   * gives up loudly: log.error with the count lost per table, onDrop("stopped"), and
   * later enqueues are refused. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.drainAndStop();
    return this.stopping;
  }

  private async drainAndStop(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = performance.now() + this.stopTimeoutMs;
    let timedOut = false;
    while (this.lanes.some((lane) => lane.pending + lane.inFlight > 0)) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) break;
      const outcome = await withinMs(this.flush(), remaining);
      if (outcome === "timeout") {
        timedOut = true;
        break;
      }
      if (outcome === "failed") await sleep(Math.min(this.retryDelayMs(), Math.max(0, deadline - performance.now())));
    }
    this.stopped = true;
    // Nothing more will be written: nobody waits any longer.
    for (const resolve of this.waitingOnRunning.concat(this.waiting)) resolve();
    this.waitingOnRunning = [];
    this.waiting = [];
    const lost: Record<string, number> = {};
    let total = 0;
    for (const lane of this.lanes) {
      const count = lane.discard("stopped");
      if (count > 0) lost[lane.name] = count;
      total += count;
    }
    this.pendingRows = 0;
    if (total > 0) {
      log.error("write buffer stopped with rows not written: they are lost", {
        lost_rows: total,
        by_table: lost,
        waited_ms: this.stopTimeoutMs,
        // A flush still running at the deadline may yet commit: its rows are counted here too.
        flush_still_running: timedOut,
      });
    }
  }

  stats(): WriteBufferStats {
    const stats: WriteBufferStats = { buffered: {}, written: {}, rejected: {}, deadLettered: {}, failures: this.failures };
    for (const lane of this.lanes) {
      stats.deadLettered[lane.name] = lane.deadLettered;
      stats.buffered[lane.name] = lane.pending + lane.inFlight;
      stats.written[lane.name] = lane.written;
      stats.rejected[lane.name] = lane.rejected;
    }
    return stats;
  }
}

/** Deliberately NOT unref'd: an awaited stop() must keep the process alive until it is done. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Settles with how `promise` went, or "timeout" after `ms` (the promise keeps running). */
function withinMs(promise: Promise<void>, ms: number): Promise<"ok" | "failed" | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  const settled = promise.then(
    () => "ok" as const,
    () => "failed" as const,
  );
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}
