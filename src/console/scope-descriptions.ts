import { html, type SafeHtml } from "./html";

/** One plain-language line per scope, for the approval and consent pages. */
const DESCRIPTIONS: Record<string, string> = {
  "inference:invoke": "Send requests to models, paid from your wallet",
  "usage:read": "See usage and the request history",
  "keys:read": "See the API keys",
  "keys:write": "Create and revoke API keys",
  "billing:read": "See your balance and transactions",
  "billing:write": "Change billing",
  "policy:read": "See budgets, rate limits and guardrails",
  "policy:write": "Create, change and remove budgets, rate limits and guardrails",
  "byok:read": "See which of your own provider keys are stored (never the keys)",
  "byok:write": "Store and delete your own provider keys",
  "namespace:read": "See the namespace",
  "namespace:write": "Create and delete namespaces",
  "clients:read": "See the registered OAuth apps",
  "clients:write": "Register and change OAuth apps",
  "user:read": "See your account's email and display name",
  "user:write": "Change or delete your account",
  "routing_preset:read": "See routing presets",
  "routing_preset:write": "Create, change and remove routing presets",
  "telemetry:write": "Send telemetry",
};

export function describeScope(scope: string): string {
  return DESCRIPTIONS[scope] ?? "Access named by this scope";
}

/** The list of scopes a grant would carry, each with its line. */
export function scopeList(scopes: readonly string[]): SafeHtml {
  if (scopes.length === 0) return html`<p>No access at all.</p>`;
  return html`<ul class="scopes">${scopes.map((scope) => html`<li><strong>${describeScope(scope)}</strong> <span class="hint">(${scope})</span></li>`)}</ul>`;
}
