import { newId } from "../auth/tokens";
import type { Sql } from "../db/connect-database";
import {
  applyAdmission,
  counterWindowState,
  countersWithExpiredHolds,
  lockCounters,
  pruneBudgetSpend,
  rateLimitRoomAt,
  releaseGrant,
  renewHolds,
  settleHolds,
  sweepExpiredHolds,
  type CounterState,
} from "../db/queries/admission";
import { log } from "../observability/log";
import type { BudgetClause, RateLimitClause } from "../policy/effective-policy";
import { budgetExceeded, NOTHING_HELD, rateLimitExceeded, type AdmissionCheck, type AdmissionInput, type Grant, type Refusal, type SettleOutcome } from "./admission-check";
import { BUDGET_WINDOWS, SPEND_RETENTION_SECS } from "./budget-windows";

export interface PolicyCountersOptions {
  /** A hold not renewed for this long (its instance died) is swept as spent. */
  holdTtlSecs?: number;
  /** Renewal, retry and sweep period. */
  tickMs?: number;
}

/** A settlement or release the database refused (unreachable): retried every tick until it lands. */
type PendingEnd = { grantId: string; keys: readonly string[]; charge: number | null; kind: "settle" | "release" };

/**
 * Budgets and rate limits, held exactly across every instance sharing one PostgreSQL.
 * One transaction per admission: it locks the request's counter rows (lockCounters, in
 * key order), reads each counter's window in a statement that starts after the locks
 * were granted, and either refuses (writing nothing but the pruning of admissions that
 * left their windows) or reserves for every clause at once. All clauses have room, or
 * none is taken: a refused request consumes nothing.
 *
 * Budgets reserve the cost ceiling as a hold; `settle` moves the hold to spend at the
 * real charge (at most the hold), `release` returns it. Holds of requests in flight are
 * renewed every tick; a hold whose instance died expires and is swept as spent at its
 * whole amount, never as free. Rate limits record one admission per request with its
 * output ceiling; `release` withdraws it, `settle` keeps it.
 */
export class PolicyCounters implements AdmissionCheck {
  /** Grants of this instance holding budget reservations, renewed every tick. */
  private readonly live = new Set<string>();
  private readonly pending = new Map<string, PendingEnd>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly holdTtlSecs: number;
  private readonly tickMs: number;

  constructor(
    private readonly sql: Sql,
    options: PolicyCountersOptions = {},
  ) {
    this.holdTtlSecs = options.holdTtlSecs ?? 30;
    this.tickMs = options.tickMs ?? 5_000;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.retryPending();
  }

  /** Throws when the database is unreachable: the pipeline answers 503, it does not admit unchecked. */
  async admit(input: AdmissionInput): Promise<Grant | Refusal> {
    // BYOK requests are not charged to the wallet, so they do not count toward budgets.
    const budgets = input.funding === "byok" ? [] : input.policy.budgets;
    const rates = input.policy.rateLimits;
    if (budgets.length === 0 && rates.length === 0) return NOTHING_HELD;
    const grantId = newId("adm", 20);
    const amount = input.costCeilingMicroUsd;
    const tokens = input.outputCeiling;
    const refusal = await this.inTransaction(async (tx) => {
      await lockCounters(tx, [...budgets.map((b) => b.counterKey), ...rates.map((r) => r.counterKey)]);
      const states = await counterWindowState(
        tx,
        budgets.map((b) => ({ key: b.counterKey, windowSecs: BUDGET_WINDOWS[b.spec.window].windowSecs })),
        rates.map((r) => ({ key: r.counterKey, windowSecs: r.spec.window_secs })),
      );
      const byKey = new Map(states.map((state) => [state.counter_key, state]));
      for (const clause of budgets) {
        const problem = budgetProblem(clause, byKey.get(clause.counterKey)!, amount);
        if (problem) return problem;
      }
      let worst: Refusal | undefined;
      for (const clause of rates) {
        const state = byKey.get(clause.counterKey)!;
        const refused = await rateLimitProblem(tx, clause, state, tokens);
        if (refused && (worst === undefined || refused.retryAfterSecs! > worst.retryAfterSecs!)) worst = refused;
      }
      if (worst) return worst;
      const judgedAt = states[0]!.judged_at;
      await applyAdmission(
        tx,
        grantId,
        budgets.map((b) => ({ key: b.counterKey, amountMicroUsd: amount, bucketSecs: BUDGET_WINDOWS[b.spec.window].bucketSecs })),
        rates.map((r) => ({ key: r.counterKey, tokens })),
        judgedAt,
        this.holdTtlSecs,
      );
      return undefined;
    });
    if (refusal) return refusal;
    const budgetKeys = budgets.map((b) => b.counterKey);
    if (budgetKeys.length > 0) this.live.add(grantId);
    return new CounterGrant(this, grantId, budgetKeys, [...budgetKeys, ...rates.map((r) => r.counterKey)]);
  }

  /** @internal the grant's settle: budgets count the charge, the rest of each hold is freed. */
  async end(pending: PendingEnd): Promise<void> {
    try {
      await this.inTransaction(async (tx) => {
        await lockCounters(tx, pending.keys);
        if (pending.kind === "settle") await settleHolds(tx, pending.grantId, pending.charge);
        else await releaseGrant(tx, pending.grantId);
      });
      this.pending.delete(pending.grantId);
      this.live.delete(pending.grantId);
    } catch (error) {
      // Keep renewing the holds and retry every tick: dropping them would let them be
      // swept as spent in full, and a release would never withdraw its admissions.
      this.pending.set(pending.grantId, pending);
      log.warn("could not settle a budget or rate-limit grant; retrying", { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Renews this instance's holds, retries failed settlements, sweeps any instance's expired holds. */
  async tick(): Promise<void> {
    try {
      await renewHolds(this.sql, [...this.live], this.holdTtlSecs);
      await this.retryPending();
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

  private async retryPending(): Promise<void> {
    for (const pending of [...this.pending.values()]) await this.end(pending);
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
  ) {}

  settle(outcome: SettleOutcome): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.ended = true;
    // Rate-limit admissions stay as they are: only budget holds have something to settle.
    if (this.budgetKeys.length === 0) return Promise.resolve();
    return this.counters.end({ grantId: this.grantId, keys: this.budgetKeys, charge: outcome.chargeMicroUsd, kind: "settle" });
  }

  release(): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.ended = true;
    return this.counters.end({ grantId: this.grantId, keys: this.allKeys, charge: null, kind: "release" });
  }
}

function budgetProblem(clause: BudgetClause, state: CounterState, amount: number): Refusal | undefined {
  const { window, limit_micro_usd: limit } = clause.spec;
  const spent = window === "total" ? state.spent_micro_usd : state.window_spent_micro_usd;
  const reserved = state.reserved_micro_usd;
  if (spent + reserved + amount <= limit) return undefined;
  const name = clause.source.policyName;
  const message =
    amount > limit
      ? `this request may cost up to ${amount} micro-USD, more than the ${window} budget "${name}" of ${limit} micro-USD allows`
      : `the ${window} budget "${name}" of ${limit} micro-USD has no room for this request (up to ${amount} micro-USD): ${spent} spent, ${reserved} reserved for requests in flight`;
  return budgetExceeded(clause.source, message);
}

async function rateLimitProblem(tx: Sql, clause: RateLimitClause, state: CounterState, tokens: number): Promise<Refusal | undefined> {
  const { window_secs: windowSecs, max_requests: maxRequests, max_tokens: maxTokens } = clause.spec;
  const excessRequests = maxRequests == null ? 0 : state.window_requests + 1 - maxRequests;
  const excessTokens = maxTokens == null ? 0 : state.window_tokens + tokens - maxTokens;
  if (excessRequests <= 0 && excessTokens <= 0) return undefined;
  const name = clause.source.policyName;
  if (maxTokens != null && tokens > maxTokens) {
    // No amount of waiting makes room: a window's worth is the honest answer.
    return rateLimitExceeded(clause.source, `this request may produce ${tokens} tokens, more than rate limit "${name}" allows in ${windowSecs} s (${maxTokens}); lower its max tokens`, windowSecs);
  }
  const wait = await rateLimitRoomAt(tx, clause.counterKey, windowSecs, Math.max(excessRequests, 0), Math.max(excessTokens, 0), state.judged_at);
  const what = excessRequests > 0 ? `${maxRequests} requests` : `${maxTokens} tokens`;
  return rateLimitExceeded(clause.source, `rate limit "${name}" of ${what} per ${windowSecs} s is full`, wait ?? windowSecs);
}
