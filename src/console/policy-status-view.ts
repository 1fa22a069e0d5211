import type { BudgetFigures, BudgetStatus, PolicyStatus, PresetStatus, RateLimitClauseStatus, RateLimitStatus } from "../management/policies/policy-status";
import { formatCount, formatUsd } from "./format";
import { html, type SafeHtml } from "./html";
import { durationText } from "./policy-summary";
import { usageBar } from "./svg-chart";

/** Which binding's figures to show: one principal's own, else the binding nearest its limit (the top level). */
export interface StatusFocus {
  principal_type: string;
  principal_id: string;
}

function budgetView(status: BudgetStatus, focus?: StatusFocus): SafeHtml {
  const own = focus ? status.principals.find((entry) => entry.principal_type === focus.principal_type && entry.principal_id === focus.principal_id) : undefined;
  const figures: BudgetFigures = own ?? status;
  const words = `${formatUsd(figures.spent_micro_usd)} spent${figures.reserved_micro_usd > 0 ? `, ${formatUsd(figures.reserved_micro_usd)} reserved` : ""} of ${formatUsd(status.limit_micro_usd)}: ${formatUsd(figures.remaining_micro_usd)} left`;
  return html`<div class="policy-status"><p>${words}</p>${usageBar(figures.spent_micro_usd, figures.reserved_micro_usd, status.limit_micro_usd, words)}</div>`;
}

function clauseLines(clause: RateLimitClauseStatus): SafeHtml[] {
  const window = durationText(clause.window_secs);
  const resets = clause.resets_in_secs > 0 ? `, room again in ${durationText(clause.resets_in_secs)}` : "";
  const line = (used: number, max: number, unit: string) => {
    const words = `${formatCount(used)} of ${formatCount(max)} ${unit} in the last ${window}${resets}`;
    return html`<p>${words}</p>${usageBar(used, 0, max, words)}`;
  };
  return [
    ...(clause.max_requests !== null ? [line(clause.used_requests ?? 0, clause.max_requests, "requests")] : []),
    ...(clause.max_tokens !== null ? [line(clause.used_tokens ?? 0, clause.max_tokens, "tokens")] : []),
  ];
}

function rateLimitView(status: RateLimitStatus, focus?: StatusFocus): SafeHtml {
  const own = focus ? status.principals.find((entry) => entry.principal_type === focus.principal_type && entry.principal_id === focus.principal_id) : undefined;
  return html`<div class="policy-status">${(own?.clauses ?? status.clauses).map(clauseLines)}</div>`;
}

/**
 * How much of a budget or a rate limit is used, in words and as a bar: the figures of
 * `GET …/policies/{id}/status`, which admission decides by. Other kinds show nothing.
 */
export function policyStatusView(status: PolicyStatus, focus?: StatusFocus): SafeHtml | "" {
  switch (status.kind) {
    case "budget":
      return budgetView(status as BudgetStatus, focus);
    case "rate_limit":
      return rateLimitView(status as RateLimitStatus, focus);
    case "preset": {
      const preset = status as PresetStatus;
      return html`${preset.budget ? budgetView(preset.budget, focus) : ""}${preset.rate_limit ? rateLimitView(preset.rate_limit, focus) : ""}`;
    }
    default:
      return "";
  }
}
