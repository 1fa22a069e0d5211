import type { AdmissionInput, FundingSource } from "../../src/admission/policy-admission";
import { composePolicies } from "../../src/policy/compose-policies";
import type { BoundPolicy, EffectivePolicy, PrincipalRef } from "../../src/policy/effective-policy";
import { toPolicyRecord } from "../../src/policy/policy-record";

/** A policy bound to a principal, as the policy store would load it (spec validated, patterns compiled). */
export function bound(id: string, kind: string, spec: object, principal: PrincipalRef = { type: "api_key", id: "k_test" }, disabled = false): BoundPolicy {
  return { policy: toPolicyRecord({ id, name: `${kind} ${id}`, kind, spec, disabled_at: disabled ? new Date() : null }), principal };
}

export function effective(...policies: BoundPolicy[]): EffectivePolicy {
  return composePolicies(policies);
}

export function request(policy: EffectivePolicy, overrides: Partial<AdmissionInput> & { funding?: FundingSource } = {}): AdmissionInput {
  return {
    policy,
    model: "openai/gpt-4o-mini",
    stream: false,
    maxTokens: undefined,
    outputCeiling: 100,
    costCeilingMicroUsd: 100,
    funding: "cloud_credit",
    texts: () => ["hello"],
    ...overrides,
  };
}
