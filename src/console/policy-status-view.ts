import type { BudgetFigures, BudgetStatus, PolicyStatus, PresetStatus, RateLimitClauseStatus, RateLimitStatus } from "../management/policies/policy-status";
import { maxTokensThatFit, type BudgetFloor } from "./budget-floor";
import { formatCount, formatUsd } from "./format";
import { html, type SafeHtml } from "./html";
import { durationText } from "./policy-summary";
import { usageBar } from "./svg-chart";

/** Which binding's figures to show: one principal's own, else the binding nearest its limit (the top level). */
export interface StatusFocus {
  principal_type: string;
  principal_id: string;
}

/**
 * Why a budget with room left still refuses every request: what is left is below the
 * reservation of the smallest request on the cheapest model (budget-floor.ts). The words
 * say it is a lower bound, and what a lower `max_tokens` still lets through.
 */
function blockedWhy(left: number, floor: BudgetFloor): SafeHtml {
  const fits = maxTokensThatFit(floor, left);
  return html`<p class="blocked-why">Admission reserves a request's most possible cost before sending it. Even the smallest request (one short message) without <code>max_tokens</code> reserves at least ${formatUsd(floor.microUsd)} on the cheapest model, <code>${floor.modelId}</code> (${formatCount(floor.outputTokens)} output tokens assumed); a longer prompt or a dearer model reserves more. A lower <code>max_tokens</code> lowers the reservation: ${
    fits > 0 ? html`on <code>${floor.modelId}</code>, a short request with <code>max_tokens</code> of at most ${formatCount(fits)} still fits.` : "not even one output token fits in what is left."
  }</p>`;
}

function budgetView(status: BudgetStatus, focus?: StatusFocus, floor?: BudgetFloor): SafeHtml {
  const own = focus ? status.principals.find((entry) => entry.principal_type === focus.principal_type && entry.principal_id === focus.principal_id) : undefined;
  const figures: BudgetFigures = own ?? status;
  const left = figures.remaining_micro_usd;
  const blocked = floor !== undefined && left < floor.microUsd;
  const figuresWords = `${formatUsd(figures.spent_micro_usd)} spent${figures.reserved_micro_usd > 0 ? `, ${formatUsd(figures.reserved_micro_usd)} reserved` : ""} of ${formatUsd(status.limit_micro_usd)}: ${formatUsd(left)} left`;
  const words = blocked ? `Blocked: ${figuresWords}` : figuresWords;
  return html`<div class="policy-status${blocked ? " blocked" : ""}"><p>${blocked ? html`<strong class="blocked-label">Blocked:</strong> ` : ""}${figuresWords}</p>${usageBar(
    figures.spent_micro_usd,
    figures.reserved_micro_usd,
    status.limit_micro_usd,
    words,
    blocked,
  )}${blocked ? blockedWhy(left, floor) : ""}</div>`;
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
 * With the catalog's `floor`, a budget whose room no request's reservation fits in is
 * shown as blocked, with why.
 */
export function policyStatusView(status: PolicyStatus, focus?: StatusFocus, floor?: BudgetFloor): SafeHtml | "" {
  switch (status.kind) {
    case "budget":
      return budgetView(status as BudgetStatus, focus, floor);
    case "rate_limit":
      return rateLimitView(status as RateLimitStatus, focus);
    case "preset": {
      const preset = status as PresetStatus;
      return html`${preset.budget ? budgetView(preset.budget, focus, floor) : ""}${preset.rate_limit ? rateLimitView(preset.rate_limit, focus) : ""}`;
    }
    default:
      return "";
  }
}
