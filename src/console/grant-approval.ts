import type { Namespace } from "../management/namespaces/namespace-service";
import { html, type SafeHtml } from "./html";

/**
 * The end of a form that approves a grant (the device and consent pages): the namespace
 * the grant will be bound to, picked among the account's, then approve or deny.
 */
export function namespaceAndDecision(namespaces: readonly Namespace[], approve: { value: string; label: string }): SafeHtml {
  return html`<label for="namespace_id">Namespace it may use</label>
<select id="namespace_id" name="namespace_id">${namespaces.map((namespace) => html`<option value="${namespace.id}">${namespace.name}</option>`)}</select>
<button type="submit" name="decision" value="${approve.value}">${approve.label}</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>`;
}
