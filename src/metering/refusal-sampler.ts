import type { Sql } from "../db/connect-database";
import { addRefusedRequestCounts, type RefusedRequestCount } from "../db/queries/metering";
import { log } from "../observability/log";

const MINUTE_MS = 60_000;

/**
 * Keeps the records of requests refused before admission bounded per account. A client
 * looping on a request it got wrong (`max_tokens: 0`, an unknown model) is refused before
 * any upstream call, costs nothing, and would otherwise write one full request record per
 * attempt, without limit. So each account's first `perMinute` such refusals in a minute
 * get their record (a single bad request still shows in the history, with its status and
 * model, as before); the rest are counted by account, UTC day and status in memory and
 * added to refused_request_counts every `intervalMs` on the primary pool.
 *
 * Per process: with N processes or instances an account gets up to N × `perMinute`
 * records a minute, still a bound. A count whose write fails is kept and added to the next
 * one; one whose connection died after PostgreSQL committed it may be added twice (a count
 * of refusals, not money: over-counting a bad loop is the lesser error).
 */
export class RefusalSampler {
  private minute = -1;
  /** Records given this minute, per account: only accounts refused this minute. */
  private recorded = new Map<string, number>();
  /** Refusals not recorded since the last write, by account, day and status. */
  private pending = new Map<string, RefusedRequestCount>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly sql: Sql,
    readonly perMinute: number,
    private readonly intervalMs = 5_000,
    private readonly clock: () => number = Date.now,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref?.();
  }

  /** Whether this refusal gets its own record; when it does not, it is counted. */
  sample(accountId: string, statusCode: number): boolean {
    const now = this.clock();
    const minute = Math.floor(now / MINUTE_MS);
    if (minute !== this.minute) {
      this.minute = minute;
      this.recorded.clear();
    }
    const recorded = this.recorded.get(accountId) ?? 0;
    if (recorded < this.perMinute) {
      this.recorded.set(accountId, recorded + 1);
      return true;
    }
    const day = new Date(now).toISOString().slice(0, 10);
    const key = `${accountId}\n${day}\n${statusCode}`;
    const entry = this.pending.get(key);
    if (entry === undefined) this.pending.set(key, { accountId, day, statusCode, count: 1 });
    else entry.count += 1;
    return false;
  }

  /** Writes the counts gathered so far; false when that failed and they wait for the next tick. */
  async flush(): Promise<boolean> {
    if (this.pending.size === 0) return true;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await addRefusedRequestCounts(this.sql, [...batch.values()]);
      return true;
    } catch (error) {
      // Put the counts back, added to what arrived meanwhile, for the next tick.
      for (const [key, entry] of batch) {
        const current = this.pending.get(key);
        if (current === undefined) this.pending.set(key, entry);
        else current.count += entry.count;
      }
      log.warn("refused request counts could not be written", { error: String(error) });
      return false;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
