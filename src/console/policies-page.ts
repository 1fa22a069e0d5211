import type { PolicyBindingRow, PolicyRow } from "../db/queries/policies";
import type { PolicyStatus } from "../management/policies/policy-status";
import type { PresetSpec } from "../policy/policy-spec";
import type { BudgetFloor } from "./budget-floor";
import { guardrailForm } from "./guardrail-form";
import { html } from "./html";
import { buttonForm, formFields, managementLayout, selectOptions, valueOf, type FormState } from "./management-layout";
import type { ManagementRequest } from "./management-request";
import type { NamespacePrincipals } from "./namespace-principals";
import { policyBindings } from "./policy-bindings-view";
import { policyStatusView } from "./policy-status-view";
import { policySummary } from "./policy-summary";

const KIND_NAMES: Record<string, string> = { budget: "Budget", rate_limit: "Rate limit", guardrail: "Guardrail", preset: "Policy preset" };

/**
 * Which form a refusal belongs to: its fields are filled again, the other forms' are not.
 * "preset_budget" is the budget form under one preset, the one whose id was submitted.
 */
export type PolicyForm = "budget" | "rate_limit" | "guardrail" | "preset_budget";

/** What the page lists: the namespace's policies, every binding of them, and the principals they can name. */
export interface PoliciesView {
  policies: readonly PolicyRow[];
  bindings: readonly PolicyBindingRow[];
  principals: NamespacePrincipals;
  /** Current figures of each enabled budget, rate limit and preset (the binding nearest its limit). */
  statuses: ReadonlyMap<string, PolicyStatus>;
  /** The smallest request's reservation, to tell a budget that admits nothing (budget-floor.ts). */
  floor?: BudgetFloor;
}

/** Micro-USD as the dollars typed into the limit field: exact digits, no float, no trailing zeros. */
function dollarsField(microUsd: number): string {
  const whole = Math.floor(microUsd / 1_000_000);
  const fraction = String(microUsd % 1_000_000).padStart(6, "0").replace(/0+$/, "");
  return fraction === "" ? String(whole) : `${whole}.${fraction}`;
}

/**
 * The change form under a budget or a rate limit, folded in a `<details>` so the list stays
 * short: the same fields as the create form, filled with the current spec, posted to the
 * API's update service (PUT …/policies/{id}). Ids carry the policy's id: one page holds many.
 * Under a policy preset, the form of its budget clause (`refused`: that form's own refusal).
 */
function editForm(req: ManagementRequest, policy: PolicyRow, refused: FormState | undefined) {
  const id = policy.id;
  const spec = policy.spec as Record<string, unknown>;
  if (policy.kind === "budget") {
    const window = String(spec.window ?? "day");
    return html`<details class="edit"><summary>Change the limit</summary><form method="post" action="/console/policies/edit-budget">
${formFields(req, "policies-edit-budget")}<input type="hidden" name="id" value="${id}">
<label for="edit-window-${id}">Budget window</label>
<select id="edit-window-${id}" name="window">${selectOptions(BUDGET_WINDOWS, window)}</select>
<label for="edit-limit-${id}">New amount in US dollars</label>
<input id="edit-limit-${id}" name="limit_usd" type="text" inputmode="decimal" required value="${dollarsField(Number(spec.limit_micro_usd))}">
<button type="submit">Save the budget</button></form></details>`;
  }
  if (policy.kind === "rate_limit") {
    const count = (name: string) => (typeof spec[name] === "number" ? String(spec[name]) : "");
    return html`<details class="edit"><summary>Change the limits</summary><form method="post" action="/console/policies/edit-rate-limit">
${formFields(req, "policies-edit-rate-limit")}<input type="hidden" name="id" value="${id}">
<label for="edit-rate-window-${id}">Length of the window, seconds</label>
<input id="edit-rate-window-${id}" name="window_secs" type="text" inputmode="numeric" required value="${count("window_secs")}">
<label for="edit-rate-requests-${id}">Request cap (empty: none)</label>
<input id="edit-rate-requests-${id}" name="max_requests" type="text" inputmode="numeric" value="${count("max_requests")}">
<label for="edit-rate-tokens-${id}">Token cap (empty: none)</label>
<input id="edit-rate-tokens-${id}" name="max_tokens" type="text" inputmode="numeric" value="${count("max_tokens")}">
<button type="submit">Save the rate limit</button></form></details>`;
  }
  if (policy.kind === "preset") return presetBudgetForm(req, id, (spec as Partial<PresetSpec>).budget ?? null, refused);
  return "";
}

/**
 * A preset's budget clause: its window and amount, or a budget added to a preset without
 * one. Only that clause changes; the rate limit and the guardrail stay. Refused, the form
 * is open again with what was typed and why, next to the field.
 */
function presetBudgetForm(req: ManagementRequest, id: string, budget: PresetSpec["budget"], refused: FormState | undefined) {
  const window = valueOf(refused ?? {}, "window", budget?.window ?? "day");
  const amount = valueOf(refused ?? {}, "limit_usd", budget ? dollarsField(budget.limit_micro_usd) : "");
  const errorId = `edit-preset-error-${id}`;
  const invalid = refused?.error ? html` aria-invalid="true" aria-describedby="${errorId}"` : "";
  return html`<details class="edit"${refused ? html` open` : ""}><summary>${budget ? "Change the budget" : "Add a budget"}</summary><form method="post" action="/console/policies/edit-preset-budget">
${formFields(req, "policies-edit-preset-budget")}<input type="hidden" name="id" value="${id}">
<label for="edit-preset-window-${id}">Budget window</label>
<select id="edit-preset-window-${id}" name="window">${selectOptions(BUDGET_WINDOWS, window)}</select>
<label for="edit-preset-limit-${id}">New amount in US dollars</label>
<input id="edit-preset-limit-${id}" name="limit_usd" type="text" inputmode="decimal" required value="${amount}"${invalid}>
${refused?.error ? html`<p class="error" id="${errorId}">${refused.error}</p>` : ""}<p class="hint">The preset's rate limit and guardrail stay as they are.</p>
<button type="submit">Save the preset's budget</button></form></details>`;
}

const BUDGET_WINDOWS = [
  ["day", "Any 24 hours"],
  ["month", "Any 30 days"],
  ["total", "In total"],
] as const;

function policyItem(req: ManagementRequest, policy: PolicyRow, view: PoliciesView, refused: FormState | undefined) {
  const disabled = policy.disabled_at !== null;
  const headingId = `policy-${policy.id}`;
  return html`<li><h3 id="${headingId}">${policy.name}</h3>
<dl><dt>Kind</dt><dd>${KIND_NAMES[policy.kind] ?? policy.kind}</dd><dt>State</dt><dd>${disabled ? "Disabled" : "Enabled"}</dd>
<dt>Rules</dt><dd>${policySummary(policy.kind, policy.spec).map((line, index) => html`${index > 0 ? html`<br>` : ""}${line}`)}</dd></dl>
${view.statuses.has(policy.id) ? policyStatusView(view.statuses.get(policy.id)!, undefined, view.floor) : ""}
${editForm(req, policy, refused)}
${
  disabled
    ? buttonForm(req, "/console/policies/enable", "policies-enable", policy.id, "Enable", { describedBy: headingId })
    : buttonForm(req, "/console/policies/disable", "policies-disable", policy.id, "Disable", { describedBy: headingId })
}
${buttonForm(req, "/console/policies/delete", "policies-delete", policy.id, "Delete", { danger: true, describedBy: headingId })}
${policyBindings(
  req,
  policy,
  view.bindings.filter((binding) => binding.policy_id === policy.id),
  view.principals,
)}</li>`;
}

/**
 * The namespace's policies with what each does in words and what each is bound to (with
 * bind and unbind), forms for a budget (in USD), a rate limit and a guardrail, and under each
 * budget, rate limit and preset the form that changes its limits.
 */
export function policiesPage(req: ManagementRequest, view: PoliciesView, state: FormState, form?: PolicyForm): Response {
  const budget = form === "budget" ? state : {};
  const rate = form === "rate_limit" ? state : {};
  const { policies } = view;
  const body = html`<div class="grid aside"><section aria-labelledby="policies-heading"><h2 id="policies-heading">Policies of ${req.namespace.name}</h2>
${policies.length === 0 ? html`<p>No policies yet: requests are limited only by the wallet.</p>` : html`<ul class="items">${policies.map((policy) => policyItem(req, policy, view, form === "preset_budget" && state.values?.id === policy.id ? state : undefined))}</ul>`}</section>
<div>
<form class="card" method="post" action="/console/policies/budget">
<h2>Create a budget</h2>
${formFields(req, "policies-budget")}
<label for="budget-name">Name</label>
<input id="budget-name" name="name" type="text" maxlength="200" required value="${valueOf(budget, "name")}">
<label for="budget-window">Window</label>
<select id="budget-window" name="window">${selectOptions(BUDGET_WINDOWS, valueOf(budget, "window", "day"))}</select>
<label for="budget-limit">Limit in US dollars</label>
<input id="budget-limit" name="limit_usd" type="text" inputmode="decimal" required aria-describedby="budget-limit-hint" value="${valueOf(budget, "limit_usd")}">
<p class="hint" id="budget-limit-hint">For example 25 or 12.345678: up to 6 decimal places.</p>
<button type="submit">Create budget</button>
</form>
<form class="card" method="post" action="/console/policies/rate-limit">
<h2>Create a rate limit</h2>
${formFields(req, "policies-rate-limit")}
<label for="rate-name">Name</label>
<input id="rate-name" name="name" type="text" maxlength="200" required value="${valueOf(rate, "name")}">
<label for="rate-window">Window in seconds</label>
<input id="rate-window" name="window_secs" type="text" inputmode="numeric" required value="${valueOf(rate, "window_secs", "60")}">
<label for="rate-requests">Most requests in the window</label>
<input id="rate-requests" name="max_requests" type="text" inputmode="numeric" aria-describedby="rate-hint" value="${valueOf(rate, "max_requests")}">
<label for="rate-tokens">Most tokens in the window</label>
<input id="rate-tokens" name="max_tokens" type="text" inputmode="numeric" aria-describedby="rate-hint" value="${valueOf(rate, "max_tokens")}">
<p class="hint" id="rate-hint">Fill in one or both; leave a cap empty for none.</p>
<button type="submit">Create rate limit</button>
</form>
${guardrailForm(req, form === "guardrail" ? state : {})}
<p class="hint">Policy presets (a budget, a rate limit and a guardrail in one policy) are created through the API; their budget changes here, under each.</p></div></div>`;
  return managementLayout(req, { path: "/console/policies", title: "Policies", state, body });
}
