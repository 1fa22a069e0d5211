import { irError, type IrError, type IrRequest } from "../ir";
import type { Principal } from "../auth/principal";
import { isRefusal, NOTHING_HELD, type AdmissionRequest, type Grant, type Refusal } from "../admission/admission-check";
import type { AdmissionChain } from "../admission/admission-chain";
import { refusalError, refusalWarning } from "../admission/admission-refusal";
import { requestTexts } from "../admission/request-texts";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import type { RequestOutcome } from "../metering/request-outcome";
import type { MeNamespace } from "../identity/me-namespace";
import { outputTokenCeiling, reservationFor } from "../admission/cost-ceiling";
import { NO_POLICY } from "../policy/compose-policies";
import type { EffectivePolicy } from "../policy/effective-policy";
import type { PolicyStore } from "../policy/policy-store";
import { requestPrincipals } from "../policy/request-principals";
import { log } from "../observability/log";

export interface AdmitDeps {
  /** Guardrails, budgets and rate limits (when a policy applies), then the wallet (when metering is on). */
  chain: Pick<AdmissionChain, "admit" | "empty">;
  namespaces: Pick<MeNamespace, "namespaceFor">;
  policies: Pick<PolicyStore, "effectivePolicy">;
}

export interface AdmitInput {
  principal: Principal;
  requestId: string;
  ir: IrRequest;
  candidates: readonly AttemptCandidate[];
  record: RequestOutcome;
}

export type Admitted =
  /**
   * `policy`: the request's effective policy, for the response-side checks. `candidates`:
   * the ones its guardrails let it use (a `byok` rule narrows them), in order.
   */
  | { ok: true; grant: Grant; policy: EffectivePolicy; candidates: readonly AttemptCandidate[] }
  /** `refusal`: set when a check refused (absent when admission could not decide). */
  | { ok: false; error: IrError; refusal?: Refusal };


/**
 * Stage 5, before any upstream call. The request's principals — its namespace (the key's
 * own, or the one it is attributed to) and its credential — give its effective policy
 * (cached by the policy store); the admission chain then runs guardrails, budgets and rate
 * limits (only when a policy applies), then the wallet. The first refusal answers the
 * request, in its protocol, and its record names the refusing policy; what the checks
 * before it granted is released. A check that cannot decide refuses the request with a
 * 503: nothing is admitted that could not be accounted for (fail closed). The grant is
 * settled or released once, when the request ends (settle.ts).
 *
 * Funding: a `byok: "forbidden"` guardrail drops the candidates funded by the account's own
 * key, `byok: "required"` those funded by the platform; the request is BYOK-funded when
 * every candidate left is. What budgets and the wallet reserve is the ceiling of the
 * platform-funded candidates only, since a BYOK-served answer is never charged: a request
 * whose every candidate is BYOK reserves nothing and needs no wallet funds. A mixed request
 * the wallet or a budget cannot cover is admitted again with its BYOK candidates alone: it
 * loses its platform fallbacks rather than being refused, and is never charged.
 */
export async function admit(deps: AdmitDeps, input: AdmitInput): Promise<Admitted> {
  const { principal, record } = input;
  if (deps.chain.empty) return { ok: true, grant: NOTHING_HELD, policy: NO_POLICY, candidates: input.candidates };
  try {
    // The namespace the request is attributed to: its record, and what policies apply.
    const namespaceId = await deps.namespaces.namespaceFor(principal);
    record.namespaceId = namespaceId;
    // OAuth clients have no tokens yet: when they do, the token's client joins the principals here.
    const policy = await deps.policies.effectivePolicy(principal.accountId, requestPrincipals(namespaceId, principal, principal.oauthClientId));
    const candidates = usableCandidates(policy, input.candidates);
    let judged = candidates;
    let result = await deps.chain.admit(admissionRequest(input, policy, candidates));
    const byokOnly = candidates.filter((candidate) => candidate.funding === "byok");
    if (isRefusal(result) && NO_FUNDS.has(result.code) && byokOnly.length > 0 && byokOnly.length < candidates.length) {
      // Nothing to pay for the platform fallbacks: the request still goes, on the account's own keys only.
      judged = byokOnly;
      result = await deps.chain.admit(admissionRequest(input, policy, byokOnly));
    }
    if (isRefusal(result)) {
      const warning = refusalWarning(result);
      if (warning) record.warnings.push(warning);
      return { ok: false, error: refusalError(result), refusal: result };
    }
    return { ok: true, grant: result, policy, candidates: judged };
  } catch (error) {
    log.error("admission unavailable", { requestId: input.requestId, error: error instanceof Error ? error.message : String(error) });
    return { ok: false, error: irError("service_unavailable", "billing is temporarily unavailable; retry shortly", { retryAfter: 1 }) };
  }
}

/** Refusals for want of money: a request on the account's own keys needs none. */
const NO_FUNDS: ReadonlySet<string> = new Set(["payment_required", "budget_exceeded"]);

function admissionRequest(input: AdmitInput, policy: EffectivePolicy, candidates: readonly AttemptCandidate[]): AdmissionRequest {
  const { ir } = input;
  const platformFunded = candidates.filter((candidate) => candidate.funding === "cloud_credit");
  const first = candidates[0]!;
  return {
    ...input,
    candidates,
    policy,
    model: first.modelId,
    stream: ir.stream,
    maxTokens: ir.params.maxTokens,
    outputCeiling: outputTokenCeiling(ir, first),
    costCeilingMicroUsd: platformFunded.length === 0 ? 0 : reservationFor(ir, platformFunded),
    funding: platformFunded.length === 0 ? "byok" : "cloud_credit",
    texts: () => requestTexts(ir),
  };
}

/**
 * The candidates a `byok` guardrail lets the request use. When it leaves none, all of them
 * are returned so that the guardrail check itself refuses the request with its reason.
 */
function usableCandidates(policy: EffectivePolicy, candidates: readonly AttemptCandidate[]): readonly AttemptCandidate[] {
  const rule = policy.guardrail?.byok?.rule;
  if (rule !== "required" && rule !== "forbidden") return candidates;
  const wanted = rule === "required" ? "byok" : "cloud_credit";
  const usable = candidates.filter((candidate) => candidate.funding === wanted);
  return usable.length > 0 ? usable : candidates;
}
