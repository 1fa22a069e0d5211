import { isControlPlaneScope, ALL_SCOPES } from "../auth/scopes";
import type { ApiKeyRow } from "../db/queries/api-keys";
import type { PolicyRow } from "../db/queries/policies";
import type { PolicyStatus } from "../management/policies/policy-status";
import { formatTime } from "./format";
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
  policy: PolicyRow;
  boundTo: "key" | "namespace";
  status: PolicyStatus;
}

function keyPolicies(req: ManagementRequest, key: ApiKeyRow, policies: readonly KeyPolicy[]) {
  if (policies.length === 0) return html`<p class="hint">No policy limits this key: only the wallet does.</p>`;
  const focus = (entry: KeyPolicy) =>
    entry.boundTo === "key" ? { principal_type: "api_key", principal_id: key.id } : { principal_type: "namespace", principal_id: req.namespace.id };
  return html`<h4 class="policies-heading">Policies</h4><ul class="key-policies">${policies.map(
    (entry) => html`<li><a href="/console/policies?ns=${encodeURIComponent(req.namespace.id)}#policy-${entry.policy.id}">${entry.policy.name}</a>
<span class="hint">${entry.boundTo === "key" ? "bound to this key" : "bound to the whole namespace"}, ${entry.policy.disabled_at ? "disabled" : "enabled"}</span>
${entry.policy.disabled_at ? "" : policyStatusView(entry.status, focus(entry))}</li>`,
  )}</ul>`;
}

/** Where a key's Revoke button posts: a namespace key, or one of the account-wide keys. */
type RevokeForm = { action: string; purpose: string };
const NAMESPACE_KEY_REVOKE: RevokeForm = { action: "/console/keys/revoke", purpose: "keys-revoke" };
const ACCOUNT_KEY_REVOKE: RevokeForm = { action: "/console/keys/revoke-account", purpose: "keys-revoke-account" };

function keyItem(req: ManagementRequest, key: ApiKeyRow, policies: readonly KeyPolicy[], revoke: RevokeForm = NAMESPACE_KEY_REVOKE) {
  const state = key.revoked_at ? `revoked ${formatTime(key.revoked_at)}` : key.expires_at && key.expires_at.getTime() <= Date.now() ? "expired" : "active";
  return html`<li><h3 id="key-${key.id}">${key.display_name}</h3>
<dl><dt>Prefix</dt><dd><code>${key.key_prefix}</code></dd><dt>Status</dt><dd>${state}</dd>
<dt>Scopes</dt><dd>${key.scopes.join(" ")}</dd><dt>Created</dt><dd>${formatTime(key.created_at)}</dd>
<dt>Expires</dt><dd>${key.expires_at ? formatTime(key.expires_at) : "never"}</dd>
<dt>Last used</dt><dd>${key.last_used_at ? formatTime(key.last_used_at) : "never"}</dd></dl>
${key.revoked_at ? "" : keyPolicies(req, key, policies)}
${key.revoked_at ? "" : buttonForm(req, revoke.action, revoke.purpose, key.id, "Revoke", { danger: true, describedBy: `key-${key.id}` })}</li>`;
}

/** The namespace's API keys (never a secret), the form to create one, and a new key's token, once. */
export function keysPage(req: ManagementRequest, keys: readonly ApiKeyRow[], accountKeys: readonly ApiKeyRow[], policiesOf: (key: ApiKeyRow) => readonly KeyPolicy[], state: FormState, created?: NewKey): Response {
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
<div class="grid form-first">
<form class="card" method="post" action="/console/keys">
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
<section aria-labelledby="keys-heading"><h2 id="keys-heading">Keys of ${req.namespace.name}</h2>
${keys.length === 0 ? html`<p>No keys yet.</p>` : html`<ul class="items">${keys.map((key) => keyItem(req, key, policiesOf(key)))}</ul>`}</section>
<section aria-labelledby="account-keys-heading"><h2 id="account-keys-heading">Account-wide keys</h2>
<p class="hint">Bound to no namespace: they act in every namespace of the account, with every scope. The operator's <code>POST /admin/accounts</code> issues one with each account.</p>
${accountKeys.length === 0 ? html`<p>None.</p>` : html`<ul class="items">${accountKeys.map((key) => keyItem(req, key, policiesOf(key), ACCOUNT_KEY_REVOKE))}</ul>`}</section>
</div>`;
  return managementLayout(req, { path: "/console/keys", title: "API keys", state, body });
}
