import type { IrError, IrRequest } from "../ir";
import type { Principal } from "../auth/principal";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import type { RequestOutcome } from "../metering/request-outcome";

/** What a check sees of a request about to be attempted. */
export interface AdmissionRequest {
  principal: Principal;
  /** The client-visible id (x-request-id), for logs. */
  requestId: string;
  ir: IrRequest;
  /** The funded candidates, in the order they will be tried. */
  candidates: readonly AttemptCandidate[];
  /** The most the request can cost on any candidate (reservationFor, src/metering/admission.ts): what a spending check reserves. */
  costCeilingMicroUsd: number;
  /** The request's record: a check notes there what it holds (the wallet its lease and reservation, which cap the charge). */
  record: RequestOutcome;
}

/** How an admitted request ended, for a grant to settle against. */
export interface SettledRequest {
  outcome: RequestOutcome;
  /** What the request was charged in micro-USD; null when unknown. */
  chargeMicroUsd: number | null;
}

/** Why a request (or, from a stream observer, an answer) is refused, in the client's protocol. */
export interface Refusal {
  error: IrError;
}

/**
 * What a check holds for an admitted request until it ends: exactly one of `settle` (the
 * request ran and was settled) or `release` (it ended without a settlement, e.g. another
 * check refused it).
 */
export interface Grant {
  settle(settled: SettledRequest): void;
  release(): void;
}

/**
 * One admission check (the wallet; budgets, rate limits and guardrails plug in the same
 * way). `admit` answers a Grant or a Refusal; it throws when it cannot decide (a database
 * unreachable), and the request is then refused with a 503: admission fails closed.
 */
export interface AdmissionCheck {
  /** For logs and for saying which check refused a request. */
  readonly name: string;
  admit(request: AdmissionRequest): Promise<Grant | Refusal>;
}

export function isRefusal(result: Grant | Refusal): result is Refusal {
  return "error" in result;
}
