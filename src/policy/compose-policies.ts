import type { BudgetSpec, GuardrailSpec, RateLimitSpec } from "./policy-spec";
import type { BoundPolicy, EffectiveGuardrail, EffectivePolicy, PolicySource, PrincipalRef } from "./effective-policy";

/** The effective policy of principals with no enabled policy: shared, never mutated. */
export const NO_POLICY: EffectivePolicy = Object.freeze({ budgets: Object.freeze([]) as never[], rateLimits: Object.freeze([]) as never[], guardrail: null });

/**
 * The admission counter of one clause of a policy as bound to one principal (see
 * BudgetClause.counterKey). Policy status reads the same counters by this name.
 */
export function policyCounterKey(policyId: string, clause: "budget" | "rate_limit", principal: PrincipalRef): string {
  return `${policyId}/${clause}/${principal.type}/${principal.id}`;
}

/**
 * Composes the policies bound to a request's principals into its effective policy.
 * Pure: the same bound policies give the same result, in their order.
 *
 * - Disabled policies are skipped. A preset contributes each clause it has, as a policy
 *   of that kind would.
 * - Every budget and every rate-limit clause applies, each against its own counter
 *   (see BudgetClause.counterKey); none replaces another.
 * - Guardrails combine most-restrictive-wins: deny lists union and win over allow
 *   lists; allow lists intersect (an empty one denies every model); the smallest
 *   max_request_tokens; allow_streaming false wins; content patterns union.
 * - BYOK: "required" and "forbidden" each win over "optional" and unset; when one policy
 *   requires BYOK and another forbids it, the result is "conflict" and no request can
 *   pass (a BYOK-funded request breaks the one, a platform-funded request the other).
 */
export function composePolicies(bound: readonly BoundPolicy[]): EffectivePolicy {
  let budgets: EffectivePolicy["budgets"] | undefined;
  let rateLimits: EffectivePolicy["rateLimits"] | undefined;
  let guardrail: EffectiveGuardrail | null = null;
  for (const { policy, principal } of bound) {
    if (policy.disabled) continue;
    const source: PolicySource = { policyId: policy.id, policyName: policy.name, principal };
    const counterKey = (clause: "budget" | "rate_limit") => policyCounterKey(policy.id, clause, principal);
    const addBudget = (spec: BudgetSpec) => (budgets ??= []).push({ spec, source, counterKey: counterKey("budget") });
    const addRateLimit = (spec: RateLimitSpec) => (rateLimits ??= []).push({ spec, source, counterKey: counterKey("rate_limit") });
    const addGuardrail = (spec: GuardrailSpec) => (guardrail = mergeGuardrail(guardrail ?? emptyGuardrail(), spec, policy.compiledPatterns, source));
    switch (policy.kind) {
      case "budget":
        addBudget(policy.spec);
        break;
      case "rate_limit":
        addRateLimit(policy.spec);
        break;
      case "guardrail":
        addGuardrail(policy.spec);
        break;
      case "preset":
        if (policy.spec.budget) addBudget(policy.spec.budget);
        if (policy.spec.rate_limit) addRateLimit(policy.spec.rate_limit);
        if (policy.spec.guardrail) addGuardrail(policy.spec.guardrail);
        break;
    }
  }
  if (!budgets && !rateLimits && !guardrail) return NO_POLICY;
  return { budgets: budgets ?? [], rateLimits: rateLimits ?? [], guardrail };
}

function emptyGuardrail(): EffectiveGuardrail {
  return {
    modelAllowLists: [],
    modelDeny: new Map(),
    maxRequestTokens: null,
    streamingForbiddenBy: null,
    streamingAllowedExplicitly: false,
    byok: null,
    byokOptionalExplicitly: false,
    contentPatterns: [],
  };
}

/** Folds one guardrail spec into the accumulated one (which this call owns and mutates). */
function mergeGuardrail(into: EffectiveGuardrail, spec: GuardrailSpec, compiled: readonly RegExp[], source: PolicySource): EffectiveGuardrail {
  if (spec.model_allow != null) into.modelAllowLists.push({ models: new Set(spec.model_allow), source });
  if (spec.model_deny != null) {
    const deny = into.modelDeny as Map<string, PolicySource>;
    for (const model of spec.model_deny) if (!deny.has(model)) deny.set(model, source);
  }
  if (spec.max_request_tokens != null && (into.maxRequestTokens === null || spec.max_request_tokens < into.maxRequestTokens.value)) {
    into.maxRequestTokens = { value: spec.max_request_tokens, source };
  }
  if (spec.allow_streaming === false) into.streamingForbiddenBy ??= source;
  if (spec.allow_streaming === true) into.streamingAllowedExplicitly = true;
  if (spec.byok === "optional") into.byokOptionalExplicitly = true;
  if (spec.byok === "required" || spec.byok === "forbidden") into.byok = mergeByok(into.byok, spec.byok, source);
  spec.content_patterns?.forEach((pattern, index) => {
    const regex = compiled[index];
    if (!regex) throw new Error(`policy ${source.policyId}: content pattern ${index} was not compiled`);
    into.contentPatterns.push({ spec: pattern, action: pattern.action ?? "block", regex, source });
  });
  return into;
}

function mergeByok(current: EffectiveGuardrail["byok"], rule: "required" | "forbidden", source: PolicySource): EffectiveGuardrail["byok"] {
  if (current === null) return { rule, sources: [source] };
  if (current.rule === rule) return { rule, sources: [...current.sources, source] };
  if (current.rule === "conflict") {
    return rule === "required" ? { ...current, required: [...current.required, source] } : { ...current, forbidden: [...current.forbidden, source] };
  }
  const required = rule === "required" ? [source] : current.sources;
  const forbidden = rule === "forbidden" ? [source] : current.sources;
  return { rule: "conflict", required, forbidden };
}
