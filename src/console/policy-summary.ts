import type { BudgetSpec, GuardrailSpec, PresetSpec, RateLimitSpec } from "../policy/policy-spec";
import { formatCount, formatUsd } from "./format";

const BUDGET_WINDOWS: Record<BudgetSpec["window"], string> = { day: "in any 24 hours", month: "in any 30 days", total: "in total" };

/** A number of seconds in the largest unit that divides it: "1 hour", "90 seconds". */
export function durationText(seconds: number): string {
  for (const [unit, size] of [["day", 86_400], ["hour", 3_600], ["minute", 60]] as const) {
    if (seconds % size === 0) {
      const count = seconds / size;
      return count === 1 ? `1 ${unit}` : `${formatCount(count)} ${unit}s`;
    }
  }
  return seconds === 1 ? "1 second" : `${formatCount(seconds)} seconds`;
}

export function budgetSummary(spec: BudgetSpec): string {
  return `Spend at most ${formatUsd(spec.limit_micro_usd)} ${BUDGET_WINDOWS[spec.window]}`;
}

export function rateLimitSummary(spec: RateLimitSpec): string {
  const caps = [
    spec.max_requests != null ? `${formatCount(spec.max_requests)} requests` : undefined,
    spec.max_tokens != null ? `${formatCount(spec.max_tokens)} tokens` : undefined,
  ].filter((cap) => cap !== undefined);
  const window = durationText(spec.window_secs);
  return caps.length === 0 ? `No cap (window ${window})` : `At most ${caps.join(" and ")} per ${window}`;
}

const BYOK_RULES = { required: "Only requests served with the account's own provider key", forbidden: "Never the account's own provider keys", optional: "Own provider keys allowed" };

/** A guardrail's rules, one sentence each. */
export function guardrailRules(spec: GuardrailSpec): string[] {
  const rules: string[] = [];
  if (spec.model_allow != null) rules.push(`Only these models: ${spec.model_allow.join(", ") || "(none)"}`);
  if (spec.model_deny != null && spec.model_deny.length > 0) rules.push(`Never these models: ${spec.model_deny.join(", ")}`);
  if (spec.max_request_tokens != null) rules.push(`At most ${formatCount(spec.max_request_tokens)} tokens per request`);
  if (spec.allow_streaming === false) rules.push("No streaming");
  if (spec.byok != null) rules.push(BYOK_RULES[spec.byok]);
  for (const pattern of spec.content_patterns ?? []) rules.push(`Content pattern “${pattern.name}”: ${pattern.action === "redact" ? "redacted" : "blocked"}`);
  return rules.length === 0 ? ["No rules"] : rules;
}

/** What a policy does, in sentences, by kind (the spec was validated when stored). */
export function policySummary(kind: string, spec: unknown): string[] {
  switch (kind) {
    case "budget":
      return [budgetSummary(spec as BudgetSpec)];
    case "rate_limit":
      return [rateLimitSummary(spec as RateLimitSpec)];
    case "guardrail":
      return guardrailRules(spec as GuardrailSpec);
    case "preset": {
      const preset = spec as Partial<PresetSpec>;
      return [
        ...(preset.budget ? [budgetSummary(preset.budget)] : []),
        ...(preset.rate_limit ? [rateLimitSummary(preset.rate_limit)] : []),
        ...(preset.guardrail ? guardrailRules(preset.guardrail) : []),
      ];
    }
    default:
      return [];
  }
}
