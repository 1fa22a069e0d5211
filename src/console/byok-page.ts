import type { byokKeyEnvelope } from "../management/byok/byok-key-service";
import type { CatalogProvider } from "../providers/catalog";
import { contentSecurityPolicy } from "./console-page";
import { formatTime } from "./format";
import { html } from "./html";
import { formFields, managementLayout, valueOf, type FormState } from "./management-layout";
import type { ManagementRequest } from "./management-request";

export type ByokKeyView = ReturnType<typeof byokKeyEnvelope>;
export const BYOK_SCRIPT_PATH = "/console/assets/byok-seal.js";

function keyItem(req: ManagementRequest, key: ByokKeyView, providerName: string) {
  const headingId = key.namespace_id === null ? `byok-${key.provider_name}` : `byok-${key.provider_name}-${key.namespace_id}`;
  return html`<li><h3 id="${headingId}">${providerName}</h3>
<dl><dt>Used by</dt><dd>${key.namespace_id === null ? "every namespace without its own key" : html`namespace <code>${key.namespace_id}</code> only`}</dd>
<dt>Key starts with</dt><dd><code>${key.key_prefix}</code>…</dd>
${key.api_base ? html`<dt>API base</dt><dd>${key.api_base}</dd>` : ""}
<dt>Set</dt><dd>${formatTime(new Date(key.updated_at))}</dd>
<dt>Last used</dt><dd>${key.last_used_at ? formatTime(new Date(key.last_used_at)) : "never"}</dd>
<dt>Last refused</dt><dd>${key.last_failure_at ? html`${formatTime(new Date(key.last_failure_at))} (${key.last_failure_kind ?? "refused"})` : "never"}</dd></dl>
<form class="inline" method="post" action="/console/byok/delete">${formFields(req, "byok-delete")}<input type="hidden" name="provider" value="${key.provider_name}">${key.namespace_id === null ? "" : html`<input type="hidden" name="namespace_id" value="${key.namespace_id}">`}<button type="submit" class="danger" aria-describedby="${headingId}">Delete</button></form></li>`;
}

/**
 * The account's own provider keys and the form to set one. The key is sealed in the page
 * (byok-seal-script.ts) to the service's public key; the field it is typed into has no
 * name, so the form never sends it, and without script the button stays disabled.
 */
export function byokPage(req: ManagementRequest, keys: readonly ByokKeyView[], providers: readonly CatalogProvider[], scriptVersion: string, state: FormState): Response {
  const names = new Map(providers.map((provider) => [provider.id, provider.name]));
  const selected = valueOf(state, "provider_name");
  const body = html`<section aria-labelledby="byok-heading"><h2 id="byok-heading">Your provider keys</h2>
<p class="hint">Requests to a provider you have a key for are served with your key and billed by that provider, not charged to the wallet. Keys set here belong to the account: every namespace uses them, except a namespace whose own credential set a key of its own for that provider.</p>
${keys.length === 0 ? html`<p>No keys yet.</p>` : html`<ul class="items">${keys.map((key) => keyItem(req, key, names.get(key.provider_name) ?? key.provider_name))}</ul>`}</section>
<form class="card" method="post" action="/console/byok" id="byok-form" data-pubkey-url="/v1/byok/encryption-pubkey">
<h2>Set a key</h2>
${formFields(req, "byok-set")}
<label for="byok-provider">Provider</label>
<select id="byok-provider" name="provider_name">${providers.map(
    (provider) => html`<option value="${provider.id}"${provider.id === selected ? html` selected` : ""}>${provider.name}</option>`,
  )}</select>
<label for="byok-key">API key</label>
<input id="byok-key" type="password" autocomplete="off" spellcheck="false" required aria-describedby="byok-key-hint">
<p class="hint" id="byok-key-hint">Sealed in this page before it is sent: the service stores only the sealed box, and only the gateway can open it. A key set again replaces the previous one.</p>
<label for="byok-api-base">API base URL (optional)</label>
<input id="byok-api-base" name="api_base" type="text" inputmode="url" maxlength="2048" value="${valueOf(state, "api_base")}">
<input type="hidden" id="byok-kek-id" name="kek_id" value=""><input type="hidden" id="byok-ciphertext" name="ciphertext_b64" value=""><input type="hidden" id="byok-key-prefix" name="key_prefix" value="">
<noscript><p class="error">Setting a key needs JavaScript in this page: the key is sealed here so that it is never sent in plaintext.</p></noscript>
<p id="byok-status" role="status"></p>
<button type="submit" id="byok-submit" disabled>Seal and save</button>
</form>
<script src="${BYOK_SCRIPT_PATH}?v=${scriptVersion}" defer></script>`;
  const response = managementLayout(req, { path: "/console/byok", title: "Provider keys (BYOK)", state, body });
  // This page alone runs a script: its own, from this origin, which may fetch from this origin only.
  response.headers.set("content-security-policy", `${contentSecurityPolicy()}; script-src 'self'; connect-src 'self'`);
  return response;
}
