import { newId } from "../ids";
import type { Sql } from "../db/connect-database";
import { endLease, takeLease, type BudgetToAdmit, type RateLimitToAdmit } from "../db/queries/admission";
import { log } from "../observability/log";

/**
 * Leases of room on hot budget and rate-limit keys (src/admission/README.md "Budgets and rate limits: exact across instances"). While one set of
 * clauses is busy (`hotAdmissionsPerSecond` admissions within a second) and far from its
 * limits, the instance takes a chunk of each clause in one database call
 * (admission_lease_take, migration 0029) and admits the requests that fit in it without
 * one: `requests` requests, that many times the cost ceiling and the output ceiling of the
 * request that took it, for `lifeMs`. A budget's chunk is one hold, renewed and swept
 * like a request's; a rate limit's is one admission row counting `requests` requests,
 * stamped at the end of the lease's life, so every request admitted from it stays counted
 * at least a whole window after its own admission. The database grants a lease only while
 * every clause keeps `headroomFactor` times the chunk free: nearer a limit, every request
 * is judged in order as before, so a lease never makes a limit admit more, and the room
 * one instance's lease can keep from another is bounded by that factor.
 *
 * A lease ends (admission_lease_end) once it expired or ran out and its requests in
 * flight have settled: their charges move to spend, the unused part of its rate-limit row
 * goes back. An ending the database refused is retried every tick, its hold renewed
 * meanwhile; a dead instance's lease hold is swept as spent at its whole amount, like a
 * request's.
 */
export interface LeaseSettings {
  /** Requests the first lease of a set admits; later ones are sized to last about half their life at the rate the last one was used, up to `maxRequests`. */
  requests: number;
  maxRequests: number;
  /** How long a lease admits requests. */
  lifeMs: number;
  /** Granted only while every clause keeps this many times the lease free. */
  headroomFactor: number;
  /** Admissions of one set of clauses within a second from which it is leased. */
  hotAdmissionsPerSecond: number;
}

export const DEFAULT_LEASE_SETTINGS: LeaseSettings = { requests: 128, maxRequests: 4_096, lifeMs: 1_000, headroomFactor: 8, hotAdmissionsPerSecond: 32 };

/** The clauses of one set, as admission_admit_batch takes them. */
export interface LeaseClauses {
  budgets: readonly BudgetToAdmit[];
  rates: readonly RateLimitToAdmit[];
}

/** Where a lease's budget hold is kept alive: the counters' set of holds they renew every tick. */
export interface HoldRenewal {
  add(id: string): void;
  delete(id: string): void;
}

/** One lease: what it was granted, and what its requests hold and used so far. */
export class CounterLease {
  private reserved = 0;
  private charged = 0;
  private usedRequests = 0;
  private usedTokens = 0;
  private inFlight = 0;
  /** Charges by the epoch second their request started: each lands in its budget bucket. */
  private readonly charges = new Map<number, number>();

  constructor(
    readonly id: string,
    readonly keys: readonly string[],
    private readonly hasBudgets: boolean,
    private readonly amountMicroUsd: number,
    private readonly requests: number,
    private readonly tokens: number,
    /** performance.now() before the call that took it: it admits nothing after `expiresAt`, counted from then. */
    readonly takenAt: number,
    readonly expiresAt: number,
  ) {}

  /** Requests admitted per millisecond since it was taken. */
  rate(now: number): number {
    return this.usedRequests / Math.max(1, now - this.takenAt);
  }

  /** Takes room for one request, or false when it does not fit or the lease expired. */
  take(amountMicroUsd: number, tokens: number, now: number): boolean {
    if (now >= this.expiresAt) return false;
    if (this.hasBudgets && this.reserved + this.charged + amountMicroUsd > this.amountMicroUsd) return false;
    if (this.usedRequests + 1 > this.requests || this.usedTokens + tokens > this.tokens) return false;
    this.reserved += amountMicroUsd;
    this.usedRequests++;
    this.usedTokens += tokens;
    this.inFlight++;
    return true;
  }

  /** A request it admitted reached an upstream: its charge (the whole ceiling when unknown, at most the ceiling) is spent. */
  settle(amountMicroUsd: number, chargeMicroUsd: number | null, startSecond: number): void {
    const charge = Math.min(chargeMicroUsd ?? amountMicroUsd, amountMicroUsd);
    this.reserved -= amountMicroUsd;
    this.charged += charge;
    if (charge > 0) this.charges.set(startSecond, (this.charges.get(startSecond) ?? 0) + charge);
    this.inFlight--;
  }

  /** A request it admitted never reached an upstream: its room comes back. */
  release(amountMicroUsd: number, tokens: number): void {
    this.reserved -= amountMicroUsd;
    this.usedRequests--;
    this.usedTokens -= tokens;
    this.inFlight--;
  }

  /** Half used or three quarters lived: time to ask for the next one, so that requests rarely wait for it. */
  nearEnd(now: number, lifeMs: number): boolean {
    return this.usedRequests * 2 >= this.requests || now >= this.expiresAt - lifeMs / 4;
  }

  get idle(): boolean {
    return this.inFlight === 0;
  }

  /**
   * What the database is told when it ends. Requests still in flight (only at shutdown,
   * after the server drained) count as admitted and charged at their whole ceiling.
   */
  ending() {
    const charges = new Map(this.charges);
    if (this.reserved > 0) {
      const second = Math.floor(Date.now() / 1000);
      charges.set(second, (charges.get(second) ?? 0) + this.reserved);
    }
    return { leaseId: this.id, keys: this.keys, charges, usedRequests: this.usedRequests, usedTokens: this.usedTokens };
  }
}

/** How busy one set of clauses is, and whether a lease for it is being taken or was refused lately. */
interface Heat {
  /** The set's clauses and the size of its last request, from which its next lease is sized. */
  clauses: LeaseClauses;
  amountMicroUsd: number;
  tokens: number;
  since: number;
  admissions: number;
  taking: boolean;
  /** performance.now() before which no lease is asked for (the last one was refused). */
  pausedUntil: number;
}

export class CounterLeases {
  private readonly active = new Map<string, CounterLease>();
  /** Expired or exhausted leases waiting for their requests in flight, or whose ending failed. */
  private readonly ending = new Set<CounterLease>();
  private readonly heat = new Map<string, Heat>();
  private stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly settings: LeaseSettings,
    private readonly holdTtlSecs: number,
    private readonly holds: HoldRenewal,
  ) {}

  /** The active lease of `setKey` with room for this request (taken), or undefined. */
  admit(setKey: string, amountMicroUsd: number, tokens: number): CounterLease | undefined {
    const lease = this.active.get(setKey);
    if (lease === undefined) return undefined;
    const now = performance.now();
    if (lease.take(amountMicroUsd, tokens, now)) {
      if (lease.nearEnd(now, this.settings.lifeMs)) this.takeNext(setKey, now);
      return lease;
    }
    // Expired or too full for this request: the next lease takes over once it is granted.
    this.active.delete(setKey);
    this.retire(lease);
    return undefined;
  }

  /** A request of `setKey` was admitted one by one: when the set is hot, a lease is taken in the background. */
  noteAdmission(setKey: string, clauses: LeaseClauses, amountMicroUsd: number, tokens: number): void {
    const now = performance.now();
    let heat = this.heat.get(setKey);
    if (heat === undefined) {
      heat = { clauses, amountMicroUsd, tokens, since: now, admissions: 0, taking: false, pausedUntil: 0 };
      this.heat.set(setKey, heat);
    }
    heat.clauses = clauses;
    heat.amountMicroUsd = amountMicroUsd;
    heat.tokens = tokens;
    if (now - heat.since > 1_000) {
      heat.since = now;
      heat.admissions = 0;
    }
    heat.admissions++;
    if (heat.admissions >= this.settings.hotAdmissionsPerSecond && !this.active.has(setKey)) this.takeNext(setKey, now);
  }

  /** Asks for the next lease of a hot set in the background, unless one is on its way or the last was refused lately. */
  private takeNext(setKey: string, now: number): void {
    const heat = this.heat.get(setKey);
    if (heat === undefined || heat.taking || now < heat.pausedUntil || this.stopped) return;
    heat.taking = true;
    const taking = this.take(setKey, heat).finally(() => {
      heat.taking = false;
      this.taking.delete(taking);
    });
    this.taking.add(taking);
  }

  private async take(setKey: string, heat: Heat): Promise<void> {
    const { clauses, amountMicroUsd, tokens } = heat;
    const { lifeMs, headroomFactor } = this.settings;
    const current = this.active.get(setKey);
    // Sized to last about half its life at the current lease's rate.
    const wanted = current === undefined ? this.settings.requests : Math.ceil((current.rate(performance.now()) * lifeMs) / 2);
    const requests = Math.min(this.settings.maxRequests, Math.max(this.settings.requests, wanted));
    const leaseId = newId("lse", 20);
    const hasBudgets = clauses.budgets.length > 0;
    const keys = [...clauses.budgets.map((b) => b.key), ...clauses.rates.map((r) => r.key)];
    const sentAt = performance.now();
    // Its hold is renewed from the moment it may exist: an instance that dies now leaves it to the sweep.
    if (hasBudgets) this.holds.add(leaseId);
    try {
      const granted = await takeLease(this.sql, {
        leaseId,
        amountMicroUsd: amountMicroUsd * requests,
        requests,
        tokens: tokens * requests,
        budgets: clauses.budgets,
        rates: clauses.rates,
        holdTtlSecs: this.holdTtlSecs,
        lifeSecs: Math.ceil(lifeMs / 1000),
        headroomFactor,
      });
      if (!granted) {
        if (hasBudgets) this.holds.delete(leaseId);
        heat.pausedUntil = performance.now() + 1_000;
        return;
      }
      const lease = new CounterLease(leaseId, keys, hasBudgets, amountMicroUsd * requests, requests, tokens * requests, sentAt, sentAt + lifeMs);
      if (this.stopped) {
        // Granted while shutting down: given back at once, not left to be swept as spent.
        this.ending.add(lease);
        await this.end(lease);
        return;
      }
      const previous = this.active.get(setKey);
      if (previous !== undefined) this.retire(previous);
      this.active.set(setKey, lease);
    } catch (error) {
      // Nothing is known to be taken; if it was, the hold expires and is swept, and the
      // rate-limit row leaves the window on its own. Requests go one by one meanwhile.
      if (hasBudgets) this.holds.delete(leaseId);
      heat.pausedUntil = performance.now() + 1_000;
      log.warn("could not take a budget or rate-limit lease", { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** After a request of `lease` settled or was released: a retired lease whose requests all ended is ended. */
  afterEnd(lease: CounterLease): void {
    if (lease.idle && this.ending.has(lease)) void this.end(lease);
  }

  /** Every tick: expired leases are retired, and the retired ones whose requests all ended are ended (or retried). */
  async tick(): Promise<void> {
    const now = performance.now();
    for (const [setKey, lease] of this.active) {
      if (now >= lease.expiresAt) {
        this.active.delete(setKey);
        this.retire(lease);
      }
    }
    for (const [setKey, heat] of this.heat) if (now - heat.since > 60_000 && !heat.taking) this.heat.delete(setKey);
    await Promise.all([...this.ending].filter((lease) => lease.idle).map((lease) => this.end(lease)));
  }

  /** Shutdown: every lease ends now. */
  async stop(): Promise<void> {
    this.stopped = true;
    // A lease granted while stopping is ended by its own take: wait for those first.
    await Promise.all(this.taking);
    for (const lease of this.active.values()) this.ending.add(lease);
    this.active.clear();
    await Promise.all([...this.ending].map((lease) => this.end(lease)));
  }

  private retire(lease: CounterLease): void {
    this.ending.add(lease);
    if (lease.idle) void this.end(lease);
  }

  /** Ends under way: a second caller (stop, during a tick's end) waits for the same call. */
  private readonly endingNow = new Map<CounterLease, Promise<void>>();
  /** Takes under way, which stop waits for. */
  private readonly taking = new Set<Promise<void>>();

  private end(lease: CounterLease): Promise<void> {
    const underway = this.endingNow.get(lease);
    if (underway !== undefined) return underway;
    const ending = this.endNow(lease);
    this.endingNow.set(lease, ending);
    return ending;
  }

  private async endNow(lease: CounterLease): Promise<void> {
    try {
      await endLease(this.sql, lease.ending());
      this.ending.delete(lease);
      this.holds.delete(lease.id);
    } catch (error) {
      // Kept, its hold renewed: the next tick tries again.
      log.warn("could not end a budget or rate-limit lease; retrying", { error: error instanceof Error ? error.message : String(error) });
    } finally {
      this.endingNow.delete(lease);
    }
  }
}
