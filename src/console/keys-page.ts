import { isControlPlaneScope, ALL_SCOPES } from "../auth/scopes";
import type { ApiKey } from "../identity/api-key-service";
import type { Policy } from "../management/policies/policy-service";
import type { PolicyStatus } from "../management/policies/policy-status";
import type { BudgetFloor } from "./budget-floor";
import { countOf, formatCount, formatTime, formatUsd } from "./format";
import { html } from "./html";
import { buttonForm, formFields, managementLayout, valueOf, type FormState } from "./management-layout";
import type { ManagementRequest } from "./management-request";
import { policyStatusView } from "./policy-status-view";

/** What a namespace key may carry: every scope but the account's control-plane ones. */
export const NAMESPACE_KEY_SCOPES: readonly string[] = ALL_SCOPES.filter((scope) => !isControlPlaneScope(scope));
/** Checked on a fresh form: what a key for an application usually needs. */
const DEFAULT_SCOPES = new Set(["inference:invoke"]);

export interface NewKey {
  token: string;
  display_name: string;
  key_prefix: string;
}

/** A policy that applies to a key: bound to the key itself or to its whole namespace, with its current figures. */
export interface KeyPolicy {
  policy: Policy;
  boundTo: "key" | "namespace";
  status: PolicyStatus;
}

/** Keys shown per page of the table: a page of 50 rows is about the height of a screen or two. */
export const KEYS_PER_PAGE = 50;

/** The policies under a key, compact for a table cell: each name (a link) with its figures. */
function keyPolicies(req: ManagementRequest, key: ApiKey, policies: readonly KeyPolicy[], floor: BudgetFloor | undefined) {
  if (policies.length === 0) return html`<span class="hint">wallet only</span>`;
  const focus = (entry: KeyPolicy) =>
    entry.boundTo === "key" ? { principal_type: "api_key", principal_id: key.id } : { principal_type: "namespace", principal_id: req.namespace.id };
  return html`<ul class="key-policies">${policies.map(
    (entry) => html`<li><a href="/console/policies?ns=${encodeURIComponent(req.namespace.id)}#policy-${entry.policy.id}">${entry.policy.name}</a>
<span class="hint">${entry.boundTo === "key" ? "this key" : "whole namespace"}${entry.policy.disabledAt ? ", disabled" : ""}</span>
${entry.policy.disabledAt ? "" : policyStatusView(entry.status, focus(entry), floor)}</li>`,
  )}</ul>`;
}

/** Where a key's Revoke button posts: a namespace key, or one of the account-wide keys. */
type RevokeForm = { action: string; purpose: string };
const NAMESPACE_KEY_REVOKE: RevokeForm = { action: "/console/keys/revoke", purpose: "keys-revoke" };
const ACCOUNT_KEY_REVOKE: RevokeForm = { action: "/console/keys/revoke-account", purpose: "keys-revoke-account" };

function keyState(key: ApiKey): string {
  if (key.revokedAt) return `revoked ${formatTime(key.revokedAt)}`;
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) return "expired";
  return key.expiresAt ? `active, expires ${formatTime(key.expiresAt)}` : "active, never expires";
}

function keyRow(req: ManagementRequest, key: ApiKey, view: KeysView, revoke: RevokeForm) {
  const nameId = `key-${key.id}`;
  return html`<tr><th scope="row" data-label="Name" class="wrap" id="${nameId}">${key.displayName}</th>
<td data-label="Prefix"><code>${key.keyPrefix}</code></td>
<td data-label="Status" class="wrap">${keyState(key)}</td>
<td data-label="Scopes" class="wrap">${key.scopes.join(" ")}</td>
<td data-label="Created">${formatTime(key.createdAt)}</td>
<td data-label="Last used">${key.lastUsedAt ? formatTime(key.lastUsedAt) : "never"}</td>
<td data-label="Spend this month" class="num">${formatUsd(view.monthSpend.get(key.id) ?? 0)}</td>
<td data-label="Limits" class="wrap limits">${key.revokedAt ? "" : keyPolicies(req, key, view.policiesOf(key), view.floor)}</td>
<td data-label="">${key.revokedAt ? "" : buttonForm(req, revoke.action, revoke.purpose, key.id, "Revoke", { danger: true, describedBy: nameId })}</td></tr>`;
}

function keysTable(req: ManagementRequest, keys: readonly ApiKey[], view: KeysView, revoke: RevokeForm, id: string) {
  return html`<div class="scroll"><table class="dense keys" id="${id}">
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Status</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col" class="num">Spend this month</th><th scope="col">Limits</th><th scope="col"><span class="visually-hidden">Revoke</span></th></tr></thead>
<tbody>${keys.map((key) => keyRow(req, key, view, revoke))}</tbody></table></div>`;
}

/** What the keys page lists besides the keys: who limits each, its spend, and the filter and page asked for. */
export interface KeysView {
  policiesOf: (key: ApiKey) => readonly KeyPolicy[];
  /** Micro-USD each key spent in this namespace since the 1st of the month, UTC. */
  monthSpend: ReadonlyMap<string, number>;
  floor?: BudgetFloor;
  /** The name or prefix filter typed (`?q=`), and the page (`?page=`, from 1). */
  filter: string;
  page: number;
}

/** The keys whose name or prefix holds the filter, case-insensitively, newest first, and this page of them. */
export function keysOnPage(keys: readonly ApiKey[], filter: string, page: number): { shown: ApiKey[]; matching: number; pages: number } {
  const needle = filter.toLowerCase();
  const newestFirst = [...keys].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const matching = needle === "" ? newestFirst : newestFirst.filter((key) => key.displayName.toLowerCase().includes(needle) || key.keyPrefix.toLowerCase().includes(needle));
  const pages = Math.max(1, Math.ceil(matching.length / KEYS_PER_PAGE));
  const at = Math.min(Math.max(1, page), pages);
  return { shown: matching.slice((at - 1) * KEYS_PER_PAGE, at * KEYS_PER_PAGE), matching: matching.length, pages };
}

function keysUrl(req: ManagementRequest, filter: string, page: number): string {
  const query = new URLSearchParams({ ns: req.namespace.id });
  if (filter !== "") query.set("q", filter);
  if (page > 1) query.set("page", String(page));
  return `/console/keys?${query}`;
}

function namespaceKeys(req: ManagementRequest, keys: readonly ApiKey[], view: KeysView) {
  const { shown, matching, pages } = keysOnPage(keys, view.filter, view.page);
  const page = Math.min(Math.max(1, view.page), pages);
  // No action: a GET form goes to this page with only its own fields (the filter and the
  // namespace, back to page 1), and the page's only forms naming /console/keys stay the posts.
  const filterForm = html`<form class="inline-filter" method="get" role="search"><input type="hidden" name="ns" value="${req.namespace.id}">
<label for="keys-filter">Name or prefix contains</label> <input id="keys-filter" name="q" type="search" value="${view.filter}"> <button type="submit" class="secondary">Filter</button>${
    view.filter !== "" ? html` <a href="${keysUrl(req, "", 1)}">All keys</a>` : ""
  }</form>`;
  const pager =
    pages > 1
      ? html`<nav aria-label="Pages of keys"><ul><li>${page > 1 ? html`<a href="${keysUrl(req, view.filter, page - 1)}" rel="prev">Previous keys</a>` : ""}</li><li>Page ${page} of ${pages}</li><li>${
          page < pages ? html`<a href="${keysUrl(req, view.filter, page + 1)}" rel="next">Next keys</a>` : ""
        }</li></ul></nav>`
      : "";
  const count = view.filter !== "" ? `${countOf(matching, "key")} of ${formatCount(keys.length)} match.` : `${countOf(keys.length, "key")}, newest first.`;
  return html`${keys.length > 0 ? html`${filterForm}<p class="hint">${count}</p>` : ""}
${keys.length === 0 ? html`<p>No keys yet.</p>` : shown.length === 0 ? html`<p>No key matches.</p>` : keysTable(req, shown, view, NAMESPACE_KEY_REVOKE, "keys-table")}${pager}`;
}

/** The namespace's API keys (never a secret), the form to create one, and a new key's token, once. */
export function keysPage(req: ManagementRequest, keys: readonly ApiKey[], accountKeys: readonly ApiKey[], view: KeysView, state: FormState, created?: NewKey): Response {
  const submitted = state.values !== undefined;
  const scopeBoxes = NAMESPACE_KEY_SCOPES.map((scope) => {
    const checked = submitted ? valueOf(state, `scope.${scope}`) !== "" : DEFAULT_SCOPES.has(scope);
    const id = `scope-${scope.replace(":", "-")}`;
    return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="scope.${scope}" value="on"${checked ? html` checked` : ""}> ${scope}</label>`;
  });
  const body = html`${
    created
      ? html`<section class="notice" aria-labelledby="new-key-heading"><h2 id="new-key-heading">New key “${created.display_name}”</h2>
<p>Copy this token now and keep it somewhere safe: it is shown only this once and cannot be read back.</p>
<label for="new-token">Token</label><input id="new-token" type="text" readonly value="${created.token}" class="secret">
<p class="hint">Select the field and copy it (Ctrl+C or ⌘C). Requests send it as <code>Authorization: Bearer …</code>.</p></section>`
      : ""
  }
<section aria-labelledby="keys-heading"><h2 id="keys-heading">Keys of ${req.namespace.name}</h2>
${namespaceKeys(req, keys, view)}</section>
<div class="grid two">
<form class="card create-key" method="post" action="/console/keys">
<h2>Create a key</h2>
${formFields(req, "keys-create")}
<label for="display_name">Name</label>
<input id="display_name" name="display_name" type="text" maxlength="200" required value="${valueOf(state, "display_name")}">
<label for="key-expires-on">Expiry date, UTC (optional)</label>
<input id="key-expires-on" name="expires_on" type="date" aria-describedby="key-expires-hint" value="${valueOf(state, "expires_on")}">
<p class="hint" id="key-expires-hint">The key works until the end of this day, 23:59:59 UTC. Leave empty for a key that does not expire.</p>
<fieldset><legend>Scopes</legend>${scopeBoxes}</fieldset>
<p class="hint">A key of a namespace never manages the account (users, namespaces, OAuth clients).</p>
<button type="submit">Create key</button>
</form>
<form class="card" method="post" action="/console/namespaces">
<h2>Create a namespace</h2>
${formFields(req, "namespaces-create")}
<label for="namespace-name">Namespace name</label>
<input id="namespace-name" name="name" type="text" maxlength="100" required aria-describedby="namespace-hint" value="${valueOf(state, "name")}">
<p class="hint" id="namespace-hint">A namespace has its own keys, policies, history and usage; the page then shows the new one, to make its first key. Pick between namespaces with the Namespace list above.</p>
<button type="submit">Create namespace</button>
</form>
</div>
<section aria-labelledby="account-keys-heading"><h2 id="account-keys-heading">Account-wide keys</h2>
<p class="hint">Bound to no namespace: they act in every namespace of the account, with every scope. The operator's <code>POST /admin/accounts</code> issues one with each account. Spend is this namespace's.</p>
${accountKeys.length === 0 ? html`<p>None.</p>` : keysTable(req, accountKeys, view, ACCOUNT_KEY_REVOKE, "account-keys-table")}</section>
`;
  return managementLayout(req, { path: "/console/keys", title: "API keys", state, body });
}
