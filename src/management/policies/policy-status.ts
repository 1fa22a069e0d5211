import type { BudgetCounterStatusRow, RateLimitCounterStatusRow } from "../../db/queries/policies";
import type { BudgetSpec, BudgetWindow, RateLimitSpec } from "../../policy/policy-spec";

/**
 * GET …/policies/{id}/status (docs/api/policies.md "Policies"): how much of a budget or a rate
 * limit is used, from the counters admission itself decides by. A policy bound to several
 * principals holds one counter per binding (each principal is capped on its own), so the
 * top-level figures are those of the binding nearest its limit, the one that refuses
 * first, and `principals` has every binding's own figures. An unbound policy has nothing
 * used.
 */
export interface BudgetFigures {
  spent_micro_usd: number;
  reserved_micro_usd: number;
  remaining_micro_usd: number;
}

export interface BudgetStatus extends BudgetFigures {
  kind: "budget";
  window: BudgetWindow;
  limit_micro_usd: number;
  principals: (BudgetFigures & BoundPrincipal)[];
}

export interface RateLimitClauseStatus {
  window_secs: number;
  /** Null when the clause does not limit requests, and then so is used_requests. */
  max_requests: number | null;
  used_requests: number | null;
  /** Null when the clause does not limit tokens, and then so is used_tokens. */
  max_tokens: number | null;
  used_tokens: number | null;
  /** Whole seconds until the oldest admission in the window leaves it and frees room; 0 when the window is empty. */
  resets_in_secs: number;
}

export interface RateLimitStatus {
  kind: "rate_limit";
  clauses: RateLimitClauseStatus[];
  principals: (BoundPrincipal & { clauses: RateLimitClauseStatus[] })[];
}

/** A preset reports each clause it bundles, in the shape of that clause's own kind. */
export interface PresetStatus {
  kind: "preset";
  budget?: BudgetStatus;
  rate_limit?: RateLimitStatus;
}

export type PolicyStatus = BudgetStatus | RateLimitStatus | PresetStatus | { kind: string };

export interface BoundPrincipal {
  principal_type: string;
  principal_id: string;
}

/** `counters[i]` is the counter of `principals[i]`. */
export function budgetStatus(spec: BudgetSpec, principals: readonly BoundPrincipal[], counters: readonly BudgetCounterStatusRow[]): BudgetStatus {
  const limit = spec.limit_micro_usd;
  const figures = (spent: number, reserved: number): BudgetFigures => ({
    spent_micro_usd: spent,
    reserved_micro_usd: reserved,
    remaining_micro_usd: Math.max(0, limit - spent - reserved),
  });
  const bound = principals.map((principal, i) => ({ ...principal, ...figures(counters[i]?.spent_micro_usd ?? 0, counters[i]?.reserved_micro_usd ?? 0) }));
  let nearest: BudgetFigures = figures(0, 0);
  for (const entry of bound) if (entry === bound[0] || entry.remaining_micro_usd < nearest.remaining_micro_usd) nearest = entry;
  return {
    kind: "budget",
    window: spec.window,
    limit_micro_usd: limit,
    spent_micro_usd: nearest.spent_micro_usd,
    reserved_micro_usd: nearest.reserved_micro_usd,
    remaining_micro_usd: nearest.remaining_micro_usd,
    principals: bound,
  };
}

/** `counters[i]` is the counter of `principals[i]`. */
export function rateLimitStatus(spec: RateLimitSpec, principals: readonly BoundPrincipal[], counters: readonly RateLimitCounterStatusRow[]): RateLimitStatus {
  const clause = (counter: RateLimitCounterStatusRow | undefined): RateLimitClauseStatus => {
    const maxRequests = spec.max_requests ?? null;
    const maxTokens = spec.max_tokens ?? null;
    return {
      window_secs: spec.window_secs,
      max_requests: maxRequests,
      used_requests: maxRequests === null ? null : (counter?.used_requests ?? 0),
      max_tokens: maxTokens,
      used_tokens: maxTokens === null ? null : (counter?.used_tokens ?? 0),
      resets_in_secs: Math.max(0, counter?.resets_in_secs ?? 0),
    };
  };
  const bound = principals.map((principal, i) => ({ ...principal, clauses: [clause(counters[i])] }));
  let nearest = clause(undefined);
  for (const entry of bound) if (entry === bound[0] || usedShare(entry.clauses[0]!) > usedShare(nearest)) nearest = entry.clauses[0]!;
  return { kind: "rate_limit", clauses: [nearest], principals: bound };
}

/** How full a clause is: the larger of its request and token shares. */
function usedShare(clause: RateLimitClauseStatus): number {
  const requests = clause.max_requests === null ? 0 : (clause.used_requests ?? 0) / clause.max_requests;
  const tokens = clause.max_tokens === null ? 0 : (clause.used_tokens ?? 0) / clause.max_tokens;
  return Math.max(requests, tokens);
}
