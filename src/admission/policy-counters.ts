import { newId } from "../ids";
import type { Sql } from "../db/connect-database";
import {
  admitGrants,
  countersWithExpiredHolds,
  endGrants,
  lockCounters,
  pruneBudgetSpend,
  renewHolds,
  sweepExpiredHolds,
  type BudgetToAdmit,
  type CounterRefusal,
  type GrantToAdmit,
  type RateLimitToAdmit,
} from "../db/queries/admission";
import { rateLimitStatus, WindowReadings } from "./rate-limit-status";
import { log } from "../observability/log";
import type { BudgetClause, EffectivePolicy, RateLimitClause } from "../policy/effective-policy";
import { budgetExceeded, ENDED, NOTHING_HELD, rateLimitExceeded, type AdmissionCheck, type AdmissionRequest, type Grant, type RateLimitStatus, type Refusal, type SettleOutcome } from "./admission-check";
import { BUDGET_WINDOWS, SPEND_RETENTION_SECS } from "./budget-windows";
import { CounterLeases, type CounterLease, type LeaseSettings } from "./counter-leases";
import { GroupCommit } from "./group-commit";

export interface PolicyCountersOptions {
  /** A hold not renewed for this long (its instance died) is swept as spent. */
  holdTtlSecs?: number;
  /** Renewal, retry and sweep period. */
  tickMs?: number;
  /** The most requests one database call decides (1: a call per request). */
  maxBatch?: number;
  /** Leases of room on hot keys far from their limits (counter-leases.ts); off unless given. */
  leases?: LeaseSettings;
}

/** One request waiting for admission, with the clauses it shares with the rest of its batch. */
type AdmissionItem = { grant: GrantToAdmit; budgets: readonly BudgetToAdmit[]; rates: readonly RateLimitToAdmit[]; setKey: string };

/** One request's decision, and what its rate limits have left after its batch (shared by the batch). */
type AdmissionDecision = { refused: CounterRefusal | undefined; rateLimits: RateLimitStatus | undefined };

/** A settlement or release the database refused (unreachable): retried every tick until it lands. */
type PendingEnd = { grantId: string; keys: readonly string[]; chargeMicroUsd: number | null; kind: "settle" | "release" };

/**
 * Budgets and rate limits, held exactly across every instance sharing one PostgreSQL.
 * Admissions on the same clauses are group-committed: those arriving while a call for
 * their clauses is in flight go together in the next one (admission_admit_batch,
 * migration 0024), which locks the counter rows in key order, reads each counter's window
 * after the locks were granted and judges the requests in order, each against every
 * earlier decision. A request either reserves on every clause at once or, refused, takes
 * nothing. Settlements and releases of the same counters are batched the same way.
 *
 * Budgets reserve the cost ceiling as a hold; `settle` moves the hold to spend at the
 * real charge (at most the hold), `release` returns it. Holds of requests in flight are
 * renewed every tick; a hold whose instance died expires and is swept as spent at its
 * whole amount, never as free. Rate limits record one admission per request with its
 * output ceiling; `release` withdraws it, `settle` keeps it.
 */
export class PolicyCounters implements AdmissionCheck {
  readonly name = "budgets and rate limits";
  /** Grants of this instance holding budget reservations, renewed every tick. */
  private readonly live = new Set<string>();
  private readonly pending = new Map<string, PendingEnd>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly holdTtlSecs: number;
  private readonly tickMs: number;
  private readonly admissions: GroupCommit<AdmissionItem, AdmissionDecision>;
  /** The windows the last batch of each set read, for the headers of requests admitted from a lease. */
  private readonly readings = new WindowReadings();
  private readonly ends: GroupCommit<PendingEnd, undefined>;
  private readonly leases: CounterLeases | undefined;

  constructor(
    private readonly sql: Sql,
    options: PolicyCountersOptions = {},
  ) {
    this.holdTtlSecs = options.holdTtlSecs ?? 30;
    this.tickMs = options.tickMs ?? 5_000;
    const maxBatch = options.maxBatch ?? 256;
    this.admissions = new GroupCommit(async (items) => {
      const first = items[0]!;
      const batch = await admitGrants(
        this.sql,
        items.map((item) => item.grant),
        first.budgets,
        first.rates,
        this.holdTtlSecs,
      );
      // The windows as they stand after the whole batch, read in the same call: one status
      // for every request of it, and no query of its own.
      const rateLimits = rateLimitStatus(first.rates, batch.windows);
      if (first.rates.length > 0) this.readings.note(first.setKey, batch.windows);
      return batch.refusals.map((refused) => ({ refused, rateLimits }));
    }, maxBatch);
    this.ends = new GroupCommit(async (items) => {
      await endGrants(this.sql, items, items[0]!.keys, items[0]!.kind === "release");
      return items.map(() => undefined);
    }, maxBatch);
    this.leases = options.leases === undefined ? undefined : new CounterLeases(sql, options.leases, this.holdTtlSecs, this.live);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.retryPending();
    await this.leases?.stop();
  }

  /** Throws when the database is unreachable: the pipeline answers 503, it does not admit unchecked. */
  async admit(input: AdmissionRequest): Promise<Grant | Refusal> {
    // BYOK requests are not charged to the wallet, so they do not count toward budgets.
    const budgets = input.funding === "byok" ? [] : input.policy.budgets;
    const rates = input.policy.rateLimits;
    if (budgets.length === 0 && rates.length === 0) return NOTHING_HELD;
    const amount = input.costCeilingMicroUsd;
    const tokens = input.outputCeiling;
    const { budgetClauses, rateClauses, setKey } = clausesOf(input.policy, input.funding === "byok");
    const lease = this.leases?.admit(setKey, amount, tokens);
    if (lease !== undefined) {
      // Approximate (rate-limit-status.ts): the lease admitted it without reading the windows.
      const leasedLimits = rateClauses.length === 0 ? undefined : this.readings.admitLeased(setKey, rateClauses, tokens);
      return new LeasedGrant(this.leases!, lease, amount, tokens, Math.floor(Date.now() / 1000), leasedLimits);
    }
    const grantId = newId("adm", 20);
    const { refused, rateLimits } = await this.admissions.submit(setKey, {
      grant: { grantId, amountMicroUsd: amount, tokens },
      budgets: budgetClauses,
      rates: rateClauses,
      setKey,
    });
    if (refused?.clause === "budget") return { ...budgetRefusal(budgets[refused.index]!, refused.spentMicroUsd, refused.reservedMicroUsd, amount), rateLimits };
    if (refused?.clause === "rate_limit") return { ...rateLimitRefusal(rates[refused.index]!, refused.retryAfterSecs, tokens), rateLimits };
    this.leases?.noteAdmission(setKey, { budgets: budgetClauses, rates: rateClauses }, amount, tokens);
    const budgetKeys = budgets.map((b) => b.counterKey);
    if (budgetKeys.length > 0) this.live.add(grantId);
    return new CounterGrant(this, grantId, budgetKeys, [...budgetKeys, ...rates.map((r) => r.counterKey)], rateLimits);
  }

  /** Settles or releases a grant (batched with others of the same counters); when the database refuses, keeps its holds renewed and retries every tick. */
  async end(pending: PendingEnd): Promise<void> {
    try {
      await this.ends.submit(`${pending.kind}\n${pending.keys.join("\n")}`, pending);
      this.pending.delete(pending.grantId);
      this.live.delete(pending.grantId);
    } catch (error) {
      // Dropping it would let its holds be swept as spent in full, and a release would
      // never withdraw its admissions.
      this.pending.set(pending.grantId, pending);
      log.warn("could not settle a budget or rate-limit grant; retrying", { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Renews this instance's holds (leases' too), retries failed settlements, ends due leases, sweeps any instance's expired holds. */
  async tick(): Promise<void> {
    try {
      await renewHolds(this.sql, [...this.live], this.holdTtlSecs);
      await this.retryPending();
      await this.leases?.tick();
      await this.sweepExpiredHolds();
      await pruneBudgetSpend(this.sql, SPEND_RETENTION_SECS);
    } catch (error) {
      log.warn("budget and rate-limit maintenance failed", { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Holds whose instance stopped renewing them count as spent at their whole amount. Returns how many. */
  async sweepExpiredHolds(): Promise<number> {
    const keys = await countersWithExpiredHolds(this.sql);
    if (keys.length === 0) return 0;
    return this.inTransaction(async (tx) => {
      await lockCounters(tx, keys);
      return sweepExpiredHolds(tx, keys);
    });
  }

  /** All at once, so that the retries of the same counters go in one batch. */
  private async retryPending(): Promise<void> {
    await Promise.all([...this.pending.values()].map((pending) => this.end(pending)));
  }

  private async inTransaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return (await this.sql.begin((transaction) => work(transaction as unknown as Sql))) as T;
  }
}

class CounterGrant implements Grant {
  readonly kind = "grant" as const;
  private ended = false;

  constructor(
    private readonly counters: PolicyCounters,
    private readonly grantId: string,
    private readonly budgetKeys: readonly string[],
    private readonly allKeys: readonly string[],
    readonly rateLimits: RateLimitStatus | undefined,
  ) {}

  settle(outcome: SettleOutcome): Promise<void> {
    if (this.ended) return ENDED;
    this.ended = true;
    // Rate-limit admissions stay as they are: only budget holds have something to settle.
    if (this.budgetKeys.length === 0) return ENDED;
    return this.counters.end({ grantId: this.grantId, keys: this.budgetKeys, chargeMicroUsd: outcome.chargeMicroUsd, kind: "settle" });
  }

  release(): Promise<void> {
    if (this.ended) return ENDED;
    this.ended = true;
    return this.counters.end({ grantId: this.grantId, keys: this.allKeys, chargeMicroUsd: null, kind: "release" });
  }
}

/** A policy's clauses as the database takes them, and the key of their set. */
interface Clauses {
  budgetClauses: readonly BudgetToAdmit[];
  rateClauses: readonly RateLimitToAdmit[];
  /** Requests batch together, and share leases, only on identical clauses (keys and limits alike). */
  setKey: string;
}

/** Per effective policy (the policy store memoises them), with and without its budgets (BYOK skips them). */
const clausesMemo = new WeakMap<EffectivePolicy, { funded?: Clauses; byok?: Clauses }>();

function clausesOf(policy: EffectivePolicy, byok: boolean): Clauses {
  let memo = clausesMemo.get(policy);
  if (memo === undefined) {
    memo = {};
    clausesMemo.set(policy, memo);
  }
  const cached = byok ? memo.byok : memo.funded;
  if (cached !== undefined) return cached;
  const budgetClauses = (byok ? [] : policy.budgets).map((b) => ({ key: b.counterKey, limitMicroUsd: b.spec.limit_micro_usd, ...BUDGET_WINDOWS[b.spec.window] }));
  const rateClauses = policy.rateLimits.map((r) => ({ key: r.counterKey, windowSecs: r.spec.window_secs, maxRequests: r.spec.max_requests ?? null, maxTokens: r.spec.max_tokens ?? null }));
  const clauses = { budgetClauses, rateClauses, setKey: JSON.stringify([budgetClauses, rateClauses]) };
  if (byok) memo.byok = clauses;
  else memo.funded = clauses;
  return clauses;
}

/** A request admitted from a lease: it settles and releases in the lease, with no database call. */
class LeasedGrant implements Grant {
  readonly kind = "grant" as const;
  private ended = false;

  constructor(
    private readonly leases: CounterLeases,
    private readonly lease: CounterLease,
    private readonly amountMicroUsd: number,
    private readonly tokens: number,
    private readonly startSecond: number,
    readonly rateLimits: RateLimitStatus | undefined,
  ) {}

  settle(outcome: SettleOutcome): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      this.lease.settle(this.amountMicroUsd, outcome.chargeMicroUsd, this.startSecond);
      this.leases.afterEnd(this.lease);
    }
    return ENDED;
  }

  release(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      this.lease.release(this.amountMicroUsd, this.tokens);
      this.leases.afterEnd(this.lease);
    }
    return ENDED;
  }
}

function budgetRefusal(clause: BudgetClause, spent: number, reserved: number, amount: number): Refusal {
  const { window, limit_micro_usd: limit } = clause.spec;
  const name = clause.source.policyName;
  const message =
    amount > limit
      ? `this request may cost up to ${amount} micro-USD, more than the ${window} budget "${name}" of ${limit} micro-USD allows`
      : `the ${window} budget "${name}" of ${limit} micro-USD has no room for this request (up to ${amount} micro-USD): ${spent} spent, ${reserved} reserved for requests in flight`;
  return budgetExceeded(clause.source, message);
}

function rateLimitRefusal(clause: RateLimitClause, retryAfterSecs: number, tokens: number): Refusal {
  const { window_secs: windowSecs, max_requests: maxRequests, max_tokens: maxTokens } = clause.spec;
  const name = clause.source.policyName;
  if (maxTokens != null && tokens > maxTokens) {
    return rateLimitExceeded(clause.source, `this request may produce ${tokens} tokens, more than rate limit "${name}" allows in ${windowSecs} s (${maxTokens}); lower its max tokens`, retryAfterSecs);
  }
  const limits = [maxRequests != null ? `${maxRequests} requests` : undefined, maxTokens != null ? `${maxTokens} tokens` : undefined].filter(Boolean).join(" and ");
  return rateLimitExceeded(clause.source, `rate limit "${name}" of ${limits} per ${windowSecs} s is full`, retryAfterSecs);
}
