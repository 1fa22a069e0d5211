import type { PolicyBindingRow, PolicyRow } from "../../db/queries/policies";
import type { BudgetSpec, PresetSpec } from "../../policy/policy-spec";
import { isoOrNull } from "../serialize";

/** The generic policy envelope; `spec` is the kind's flat inner body as stored. */
export function policyEnvelope(row: PolicyRow) {
  return { id: row.id, name: row.name, kind: row.kind, spec: row.spec, disabled_at: isoOrNull(row.disabled_at) };
}

/** A budget policy with its spec flattened into the envelope. */
export function budgetEnvelope(row: PolicyRow) {
  const spec = row.spec as BudgetSpec;
  return { id: row.id, name: row.name, window: spec.window, limit_micro_usd: spec.limit_micro_usd, disabled_at: isoOrNull(row.disabled_at) };
}

/** A policy preset with each clause, null when it has none. */
export function policyPresetEnvelope(row: PolicyRow) {
  const spec = row.spec as Partial<PresetSpec>;
  return {
    id: row.id,
    name: row.name,
    guardrail: spec.guardrail ?? null,
    budget: spec.budget ?? null,
    rate_limit: spec.rate_limit ?? null,
    disabled_at: isoOrNull(row.disabled_at),
  };
}

export function bindingEnvelope(row: PolicyBindingRow) {
  return { id: row.id, policy_id: row.policy_id, principal_type: row.principal_type, principal_id: row.principal_id };
}
