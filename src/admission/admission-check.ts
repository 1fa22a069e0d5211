import { ERROR_TABLE } from "../errors/error-table";
import type { IrRequest } from "../ir";
import type { Principal } from "../auth/principal";
import type { Funding } from "../funding/funding-source";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import type { RequestOutcome } from "../metering/request-outcome";
import type { EffectivePolicy, PolicySource } from "../policy/effective-policy";

/**
 * The one admission interface: the wallet, guardrails, budgets and rate limits each
 * implement `AdmissionCheck`. A check refuses the request or grants it; every grant is
 * ended exactly once, by `settle` when the request reached an upstream (whatever it
 * cost), or by `release` when it never did. The pipeline's admit stage composes the
 * checks (admission-chain.ts) and renders a refusal in the client's protocol
 * (admission-refusal.ts).
 */

/** Everything admission judges a request by; built by the admit stage after model resolution and funding. */
export interface AdmissionRequest {
  principal: Principal;
  /** The client-visible id (x-request-id), for logs. */
  requestId: string;
  ir: IrRequest;
  /** The funded candidates, in the order they will be tried. */
  candidates: readonly AttemptCandidate[];
  /** The request's record: a check notes there what it holds (the wallet its lease and reservation, which cap the charge). */
  record: RequestOutcome;
  /** From `PolicyStore.effectivePolicy`; `NO_POLICY` (by identity) runs no policy check. */
  policy: EffectivePolicy;
  /** The resolved base model id (after `@preset` resolution), e.g. `openai/gpt-4o-mini`. */
  model: string;
  stream: boolean;
  /** The client's max tokens, or undefined when it set none. */
  maxTokens: number | undefined;
  /** What the request may produce: its max tokens, or the admission default. Rate limits' `max_tokens` count this. */
  outputCeiling: number;
  /** The most the request can cost on any candidate (`reservationFor`): what budgets and the wallet reserve. */
  costCeilingMicroUsd: number;
  funding: Funding;
  /**
   * The request's text a content pattern scans (system, messages, reasoning, tool-call
   * arguments, tool results), read only when a block pattern applies. See `requestTexts`.
   */
  texts: () => Iterable<string>;
}

/** How a request that reached an upstream ended. */
export interface SettleOutcome {
  /** The wallet charge in micro-USD; null when unknown (budgets then count the whole reservation). BYOK: 0. */
  chargeMicroUsd: number | null;
}

/** One dimension of a rate limit as a client sees it: its limit, what is left, seconds until room comes back. */
export interface RateLimitHeadroom {
  limit: number;
  remaining: number;
  resetSecs: number;
}

/**
 * What the request's tightest rate-limit clauses have left, for the x-ratelimit-*
 * headers: the request clause with the fewest requests left, the token clause with the
 * fewest tokens left. Absent when no rate limit applies.
 */
export interface RateLimitStatus {
  requests?: RateLimitHeadroom;
  tokens?: RateLimitHeadroom;
}

export interface Grant {
  readonly kind: "grant";
  /** Set by the rate limits' check: what they have left after this request. */
  readonly rateLimits?: RateLimitStatus;
  /** The request reached an upstream: its charge is counted, the rest of the reservation is freed. */
  settle(outcome: SettleOutcome): Promise<void>;
  /** The request never reached an upstream (a later check refused it, it failed before its first attempt): as if never admitted. */
  release(): Promise<void>;
}

/**
 * Each refusal code and the kind of the error table (src/errors/error-table.ts) it is
 * answered with: the table, not the check, decides its status and its type in each protocol.
 */
export const REFUSAL_KIND = {
  payment_required: "payment_required",
  budget_exceeded: "budget_exceeded",
  rate_limit_exceeded: "rate_limited",
  permission_denied: "permission_denied",
} as const;

export type RefusalCode = keyof typeof REFUSAL_KIND;

export interface Refusal {
  readonly kind: "refusal";
  /** The error table's status for the code's kind (402, 403, 429), copied by `refusal()`. */
  status: (typeof ERROR_TABLE)[(typeof REFUSAL_KIND)[RefusalCode]]["status"];
  code: RefusalCode;
  /** Safe to show the client: names the policy and the limit, never the request's content. */
  message: string;
  /** 429 only: whole seconds until there is room, at least 1. */
  retryAfterSecs?: number;
  /** The policy (and the principal it is bound to) that refused: what the request record names. Absent for the wallet. */
  policy?: PolicySource;
  /** What the rate limits have left, when the counters judged the request. */
  rateLimits?: RateLimitStatus;
}

/**
 * One admission check. `admit` answers a Grant or a Refusal; it throws when it cannot
 * decide (a database unreachable), and the request is then refused with a 503:
 * admission fails closed.
 */
export interface AdmissionCheck {
  /** For logs. */
  readonly name: string;
  admit(request: AdmissionRequest): Promise<Grant | Refusal>;
}

/** The grant of a check that holds nothing: shared, settling and releasing cost nothing. */
/**
 * What a grant's settle or release returns when nothing is left to wait for (it ended in
 * memory): one shared promise, so the pipeline can tell without a timer or an await
 * (RequestSettlement.holdsEnded).
 */
export const ENDED: Promise<void> = Promise.resolve();

export const NOTHING_HELD: Grant = Object.freeze({
  kind: "grant" as const,
  settle: () => ENDED,
  release: () => ENDED,
});

export function isRefusal(result: Grant | Refusal): result is Refusal {
  return result.kind === "refusal";
}

/** A refusal with the code's status from the error table. */
export function refusal(code: RefusalCode, message: string, details: Pick<Refusal, "retryAfterSecs" | "policy"> = {}): Refusal {
  return { kind: "refusal", status: ERROR_TABLE[REFUSAL_KIND[code]].status, code, message, ...details };
}

export function budgetExceeded(policy: PolicySource, message: string): Refusal {
  return refusal("budget_exceeded", message, { policy });
}

export function rateLimitExceeded(policy: PolicySource, message: string, retryAfterSecs: number): Refusal {
  return refusal("rate_limit_exceeded", message, { retryAfterSecs: Math.max(1, Math.ceil(retryAfterSecs)), policy });
}

export function permissionDenied(policy: PolicySource, message: string): Refusal {
  return refusal("permission_denied", message, { policy });
}
