import { formatMicroUsd } from "./format-table";

export interface BudgetSpec {
  window: string;
  limit_micro_usd: number;
}
export interface RateLimitSpec {
  window_secs: number;
  max_requests?: number | null;
  max_tokens?: number | null;
}
export interface GuardrailSpec {
  model_allow?: string[] | null;
  model_deny?: string[] | null;
  max_request_tokens?: number | null;
  allow_streaming?: boolean | null;
  byok?: string | null;
  content_patterns?: { name: string; action?: string }[] | null;
}

const BUDGET_WINDOWS: Record<string, string> = { day: "per 24 h", month: "per 30 days", total: "in total" };

export function describeBudget(spec: BudgetSpec): string {
  return `${formatMicroUsd(spec.limit_micro_usd)} ${BUDGET_WINDOWS[spec.window] ?? spec.window}`;
}

export function describeRateLimit(spec: RateLimitSpec): string {
  const limits: string[] = [];
  if (spec.max_requests != null) limits.push(`${spec.max_requests.toLocaleString("en-US")} requests`);
  if (spec.max_tokens != null) limits.push(`${spec.max_tokens.toLocaleString("en-US")} tokens`);
  return `${limits.join(" and ") || "no limit"} per ${spec.window_secs} s`;
}

export function describeGuardrail(spec: GuardrailSpec): string {
  const rules: string[] = [];
  if (spec.model_allow != null) rules.push(spec.model_allow.length === 0 ? "no model allowed" : `allow ${spec.model_allow.join(",")}`);
  if (spec.model_deny != null && spec.model_deny.length > 0) rules.push(`deny ${spec.model_deny.join(",")}`);
  if (spec.max_request_tokens != null) rules.push(`max_tokens ≤ ${spec.max_request_tokens}`);
  if (spec.allow_streaming === false) rules.push("no streaming");
  if (spec.byok != null && spec.byok !== "optional") rules.push(`byok ${spec.byok}`);
  const patterns = spec.content_patterns ?? [];
  if (patterns.length > 0) rules.push(`${patterns.length} content pattern${patterns.length === 1 ? "" : "s"} (${patterns.map((pattern) => `${pattern.name}:${pattern.action ?? "block"}`).join(",")})`);
  return rules.join("; ") || "no rules";
}

/** A policy's spec in one line, by kind; an unknown kind shows its JSON. */
export function describePolicySpec(kind: string, spec: unknown): string {
  switch (kind) {
    case "budget":
      return describeBudget(spec as BudgetSpec);
    case "rate_limit":
      return describeRateLimit(spec as RateLimitSpec);
    case "guardrail":
      return describeGuardrail(spec as GuardrailSpec);
    case "preset": {
      const preset = spec as { guardrail?: GuardrailSpec | null; budget?: BudgetSpec | null; rate_limit?: RateLimitSpec | null };
      return describePresetClauses(preset.guardrail ?? null, preset.budget ?? null, preset.rate_limit ?? null);
    }
    default:
      return JSON.stringify(spec);
  }
}

export function describePresetClauses(guardrail: GuardrailSpec | null, budget: BudgetSpec | null, rateLimit: RateLimitSpec | null): string {
  const clauses: string[] = [];
  if (budget) clauses.push(`budget ${describeBudget(budget)}`);
  if (rateLimit) clauses.push(`rate limit ${describeRateLimit(rateLimit)}`);
  if (guardrail) clauses.push(`guardrail: ${describeGuardrail(guardrail)}`);
  return clauses.join(" | ") || "empty";
}
