import type { AdmissionRequest } from "../../src/admission/admission-check";
import type { Funding } from "../../src/funding/funding-source";
import type { IrRequest } from "../../src/ir";
import type { Principal } from "../../src/auth/principal";
import { arrivingRequest } from "../../src/metering/request-outcome";
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

export function request(policy: EffectivePolicy, overrides: Partial<AdmissionRequest> & { funding?: Funding } = {}): AdmissionRequest {
  const principal: Principal = { kind: "api_key", id: "k_test", accountId: "acct_test", namespaceId: null, scopes: [], oauthClientId: null, expiresAt: null };
  const ir = { model: "openai/gpt-4o-mini", stream: false, messages: [], params: {} } as unknown as IrRequest;
  return {
    principal,
    requestId: "req_test",
    ir,
    candidates: [],
    record: arrivingRequest({ requestId: "req_test", principal, clientProtocol: "openai-chat", createdAt: new Date(), startedAt: 0 }),
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
