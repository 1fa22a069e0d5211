import { irError, type IrError, type IrRequest } from "../ir";
import type { Principal } from "../auth/principal";
import { isRefusal, type AdmissionCheck, type Grant } from "../admission/admission-check";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import type { RequestOutcome } from "../metering/request-outcome";
import type { NamespaceAttribution } from "../metering/namespace-attribution";
import { reservationFor } from "../metering/admission";
import { log } from "../observability/log";

export interface AdmitDeps {
  /** Every check, in order; the first refusal decides. Empty when nothing is checked (METERING=off, README "Metering"). */
  checks: readonly AdmissionCheck[];
  namespaces: Pick<NamespaceAttribution, "namespaceFor">;
}

export interface AdmitInput {
  principal: Principal;
  requestId: string;
  ir: IrRequest;
  candidates: readonly AttemptCandidate[];
  record: RequestOutcome;
}

export type Admitted = { ok: true; grant: Grant } | { ok: false; error: IrError };

/** What nothing was checked for holds nothing. */
const NOTHING_HELD: Grant = { settle: () => {}, release: () => {} };

/**
 * Stage 5, before any upstream call: every admission check in turn, against the request's
 * cost ceiling. The first refusal answers the request, and what the checks before it
 * granted is released. A check that cannot decide refuses the request with a 503: nothing
 * is admitted that could not be accounted for (fail closed). The grant returned holds
 * every check's and is settled or released once, when the request ends (settle.ts).
 */
export async function admit(deps: AdmitDeps, input: AdmitInput): Promise<Admitted> {
  if (deps.checks.length === 0) return { ok: true, grant: NOTHING_HELD };
  const costCeilingMicroUsd = reservationFor(input.ir, input.candidates);
  const grants: Grant[] = [];
  try {
    // The namespace the request is attributed to: its record, and what policies apply.
    input.record.namespaceId = await deps.namespaces.namespaceFor(input.principal);
    const request = { ...input, costCeilingMicroUsd };
    for (const check of deps.checks) {
      const result = await check.admit(request);
      if (isRefusal(result)) {
        for (const grant of grants) grant.release();
        return { ok: false, error: result.error };
      }
      grants.push(result);
    }
  } catch (error) {
    for (const grant of grants) grant.release();
    log.error("admission unavailable", { requestId: input.requestId, error: error instanceof Error ? error.message : String(error) });
    return { ok: false, error: irError("internal", "billing is temporarily unavailable; retry shortly", { status: 503, retryAfter: 1 }) };
  }
  return { ok: true, grant: grants.length === 1 ? grants[0]! : allOf(grants) };
}

function allOf(grants: readonly Grant[]): Grant {
  return {
    settle: (settled) => {
      for (const grant of grants) grant.settle(settled);
    },
    release: () => {
      for (const grant of grants) grant.release();
    },
  };
}
