import type { BudgetSpec, ContentPatternSpec, GuardrailSpec, RateLimitSpec } from "./policy-spec";
import type { EffectiveGuardrail, EffectivePolicy } from "./effective-policy";

/** The effective policy as `GET …/policies/effective` returns it. */
export interface EffectivePolicyView {
  budgets: BudgetSpec[];
  rate_limits: RateLimitSpec[];
  guardrail: GuardrailSpec | null;
}

export function effectivePolicyView(effective: EffectivePolicy): EffectivePolicyView {
  return {
    budgets: effective.budgets.map((clause) => clause.spec),
    rate_limits: effective.rateLimits.map((clause) => clause.spec),
    guardrail: effective.guardrail ? guardrailView(effective.guardrail) : null,
  };
}

/**
 * One GuardrailSpec for the composed guardrail. Allow lists are shown as their
 * intersection. A BYOK conflict (one policy requires BYOK, another forbids it) has no
 * spelling in a single spec; it is shown by what it does — no request passes — as an
 * empty allow list, with `byok` null.
 */
function guardrailView(guardrail: EffectiveGuardrail): GuardrailSpec {
  const conflict = guardrail.byok?.rule === "conflict";
  let modelAllow: string[] | null = null;
  if (conflict) modelAllow = [];
  else if (guardrail.modelAllowLists.length > 0) {
    const [first, ...rest] = guardrail.modelAllowLists;
    modelAllow = [...first!.models].filter((model) => rest.every((list) => list.models.has(model)));
  }
  let byok: GuardrailSpec["byok"] = null;
  if (guardrail.byok && guardrail.byok.rule !== "conflict") byok = guardrail.byok.rule;
  else if (!guardrail.byok && guardrail.byokOptionalExplicitly) byok = "optional";
  const patterns: ContentPatternSpec[] = guardrail.contentPatterns.map((clause) => clause.spec);
  return {
    model_allow: modelAllow,
    model_deny: guardrail.modelDeny.size > 0 ? [...guardrail.modelDeny.keys()] : null,
    max_request_tokens: guardrail.maxRequestTokens?.value ?? null,
    allow_streaming: guardrail.streamingForbiddenBy ? false : guardrail.streamingAllowedExplicitly ? true : null,
    byok,
    content_patterns: patterns.length > 0 ? patterns : null,
  };
}
