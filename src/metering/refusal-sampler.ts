import type { Sql } from "../db/connect-database";
import { addRefusedRequestCounts, claimRefusalRecord, type RefusedRequestCount } from "../db/queries/metering";
import { PeriodicBatch } from "../db/batch/periodic-batch";
import { log } from "../observability/log";

const MINUTE_MS = 60_000;

/** A refusal that called no upstream and charged nothing, and what the usage answers group it by. */
export interface SampledRefusal {
  accountId: string;
  statusCode: number;
  namespaceId: string | null;
  apiKeyId: string | null;
  /** The catalog model (a refusal at admission); null before admission, where it is the client's text. */
  modelId: string | null;
}

/**
 * Keeps the records of refused requests bounded per account. A client looping on a request
 * it got wrong (`max_tokens: 0`, an unknown model) or hammering its own rate limit, budget
 * or guardrail is refused before any upstream call, costs nothing, and would otherwise
 * write one full request record per attempt, without limit. So each account's first
 * `perMinute` such refusals in a minute get their record (a single refusal still shows in
 * the history, with its status, model and refusing policy, as before); the rest are counted
 * by account, minute, status, namespace, API key and model in memory and added to
 * refused_request_counts every `intervalMs` on the primary pool, where the usage answers
 * count them (migration 0036).
 *
 * The bound is the account's across every process and instance on the database: a record
 * is claimed in refusal_sample_minutes (an upsert that returns the running count) and,
 * once a claim comes back empty, this process counts the account's refusals for the rest
 * of the minute without asking again, so a flood costs at most `perMinute` + 1 round trips
 * per process and minute. Should the claim fail (the database away, when the record would
 * not be written either), this process's own count decides, as a bound per process.
 *
 * A count whose write fails is kept and added to the next one; one whose connection died
 * after PostgreSQL committed it may be added twice (a count of refusals, not money:
 * over-counting a bad loop is the lesser error).
 */
export class RefusalSampler {
  private minute = -1;
  /** The minute a failed claim was last logged (once a minute is enough). */
  private warnedMinute = -1;
  /** Accounts whose sample of this minute is full (no more claims until the minute turns). */
  private full = new Set<string>();
  /** Records given this minute by this process, per account: the bound when claims fail. */
  private recorded = new Map<string, number>();
  /** Claims asked of the database and not yet answered, this minute, per account. */
  private asking = new Map<string, number>();
  /** Refusals not recorded since the last write, by account, minute, status and groups. */
  private readonly pending: PeriodicBatch<RefusedRequestCount>;

  constructor(
    private readonly sql: Sql,
    readonly perMinute: number,
    intervalMs = 5_000,
    private readonly clock: () => number = Date.now,
  ) {
    this.pending = new PeriodicBatch({
      intervalMs,
      // Sorted: two processes adding to the same rows lock them in one order, never a deadlock.
      write: (batch) => addRefusedRequestCounts(this.sql, [...batch.keys()].sort().map((key) => batch.get(key)!)),
      // Put back, a count is added to what arrived meanwhile.
      putBack: (failed, current) => {
        if (current === undefined) return failed;
        current.count += failed.count;
        return current;
      },
      failure: "refused request counts could not be written",
    });
  }

  start(): void {
    this.pending.start();
  }

  /** Whether this refusal gets its own record; when it does not, it is counted. */
  async sample(refusal: SampledRefusal): Promise<boolean> {
    const minute = this.turn(Math.floor(this.clock() / MINUTE_MS));
    const accountId = refusal.accountId;
    // Claims already taken or under way here that fill the sample need no round trip: a
    // flood of simultaneous refusals from one account asks the primary pool at most
    // perMinute times a minute, not once per refusal.
    const asked = (this.recorded.get(accountId) ?? 0) + (this.asking.get(accountId) ?? 0);
    if (this.perMinute > 0 && !this.full.has(accountId) && asked < this.perMinute) {
      let claimed: boolean;
      this.asking.set(accountId, (this.asking.get(accountId) ?? 0) + 1);
      try {
        claimed = await claimRefusalRecord(this.sql, accountId, new Date(minute * MINUTE_MS), this.perMinute);
      } catch (error) {
        claimed = (this.recorded.get(accountId) ?? 0) < this.perMinute;
        if (this.warnedMinute !== minute) log.warn("refusal sample could not be claimed; this process's own count decides", { error: String(error) });
        this.warnedMinute = minute;
      } finally {
        if (this.minute === minute) {
          const left = (this.asking.get(accountId) ?? 1) - 1;
          if (left > 0) this.asking.set(accountId, left);
          else this.asking.delete(accountId);
        }
      }
      // The minute may have turned during the round trip: what is kept is of the minute asked for.
      if (claimed) {
        if (this.minute === minute) this.recorded.set(accountId, (this.recorded.get(accountId) ?? 0) + 1);
        return true;
      }
      if (this.minute === minute) this.full.add(accountId);
    }
    this.count(refusal, minute);
    return false;
  }

  /** Starts `minute` when it is a new one; returns it. */
  private turn(minute: number): number {
    if (minute !== this.minute) {
      this.minute = minute;
      this.full.clear();
      this.recorded.clear();
      this.asking.clear();
    }
    return minute;
  }

  private count(refusal: SampledRefusal, minute: number): void {
    const key = JSON.stringify([refusal.accountId, minute, refusal.statusCode, refusal.namespaceId, refusal.apiKeyId, refusal.modelId]);
    const entry = this.pending.get(key);
    if (entry !== undefined) entry.count += 1;
    else {
      this.pending.set(key, {
        accountId: refusal.accountId,
        minute: new Date(minute * MINUTE_MS),
        statusCode: refusal.statusCode,
        namespaceId: refusal.namespaceId,
        apiKeyId: refusal.apiKeyId,
        modelId: refusal.modelId,
        count: 1,
      });
    }
  }

  /** Writes the counts gathered so far; false when that failed and they wait for the next tick. */
  flush(): Promise<boolean> {
    return this.pending.flush();
  }

  stop(): Promise<void> {
    return this.pending.stop();
  }
}
