import type { Policy, PolicyBinding } from "./policy-service";
import type { BudgetSpec, PresetSpec } from "../../policy/policy-spec";
import { isoOrNull } from "../serialize";

/** The generic policy envelope; `spec` is the kind's flat inner body as stored. */
export function policyEnvelope(policy: Policy) {
  return { id: policy.id, name: policy.name, kind: policy.kind, spec: policy.spec, disabled_at: isoOrNull(policy.disabledAt) };
}

/** A budget policy with its spec flattened into the envelope. */
export function budgetEnvelope(policy: Policy) {
  const spec = policy.spec as BudgetSpec;
  return { id: policy.id, name: policy.name, window: spec.window, limit_micro_usd: spec.limit_micro_usd, disabled_at: isoOrNull(policy.disabledAt) };
}

/** A policy preset with each clause, null when it has none. */
export function policyPresetEnvelope(policy: Policy) {
  const spec = policy.spec as Partial<PresetSpec>;
  return {
    id: policy.id,
    name: policy.name,
    guardrail: spec.guardrail ?? null,
    budget: spec.budget ?? null,
    rate_limit: spec.rate_limit ?? null,
    disabled_at: isoOrNull(policy.disabledAt),
  };
}

export function bindingEnvelope(binding: PolicyBinding) {
  return { id: binding.id, policy_id: binding.policyId, principal_type: binding.principalType, principal_id: binding.principalId };
}
