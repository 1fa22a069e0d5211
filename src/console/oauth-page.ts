import type { OauthGrant } from "../identity/oauth-grant-service";
import { CLIENT_GRANT_TYPES } from "../management/oauth-clients/oauth-client-body";
import type { clientEnvelope } from "../management/oauth-clients/oauth-client-service";
import { formatTime } from "./format";
import { html } from "./html";
import { buttonForm, formFields, managementLayout, valueOf, type FormState } from "./management-layout";
import type { ManagementRequest } from "./management-request";

export type OauthClientView = ReturnType<typeof clientEnvelope>;
export interface NewClient {
  client_name: string;
  client_id: string;
  client_secret: string | null;
}

const GRANT_NAMES: Record<string, string> = {
  authorization_code: "Authorization code (web sign-in with PKCE)",
  refresh_token: "Refresh token",
  "urn:ietf:params:oauth:grant-type:device_code": "Device code (CLIs, TVs)",
};
const DEFAULT_GRANTS = new Set(["authorization_code", "refresh_token"]);

function clientItem(req: ManagementRequest, client: OauthClientView) {
  const headingId = `client-${client.id}`;
  return html`<li><h3 id="${headingId}">${client.client_name}</h3>
<dl><dt>Client id</dt><dd><code>${client.client_id}</code></dd><dt>Type</dt><dd>${client.client_type}</dd>
<dt>Redirect URIs</dt><dd>${client.redirect_uris.length === 0 ? "(none)" : client.redirect_uris.map((uri, index) => html`${index > 0 ? html`<br>` : ""}${uri}`)}</dd>
<dt>Grant types</dt><dd>${client.allowed_grant_types.join(", ")}</dd><dt>Registered</dt><dd>${formatTime(new Date(client.created_at))}</dd></dl>
${buttonForm(req, "/console/oauth/clients/delete", "oauth-client-delete", client.id, "Delete", { danger: true, describedBy: headingId })}</li>`;
}

function grantItem(req: ManagementRequest, grant: OauthGrant) {
  const headingId = `grant-${grant.id}`;
  return html`<li><h3 id="${headingId}">${grant.clientName ?? grant.clientId}</h3>
<dl><dt>Scopes</dt><dd>${grant.scopes.join(" ")}</dd><dt>Approved</dt><dd>${formatTime(grant.createdAt)}</dd>
<dt>Last used</dt><dd>${grant.lastUsedAt ? formatTime(grant.lastUsedAt) : "never"}</dd></dl>
${buttonForm(req, "/console/oauth/grants/revoke", "oauth-grant-revoke", grant.id, "Revoke", { danger: true, describedBy: headingId })}</li>`;
}

/** The namespace's registered OAuth clients (a new one's secret shown once) and the grants users approved. */
export function oauthPage(req: ManagementRequest, clients: readonly OauthClientView[], grants: readonly OauthGrant[], state: FormState, created?: NewClient): Response {
  const submitted = state.values !== undefined;
  const type = valueOf(state, "client_type", "confidential");
  const grantBoxes = CLIENT_GRANT_TYPES.map((grant, index) => {
    const checked = submitted ? valueOf(state, `grant.${grant}`) !== "" : DEFAULT_GRANTS.has(grant);
    return html`<label class="check" for="grant-${index}"><input type="checkbox" id="grant-${index}" name="grant.${grant}" value="on"${checked ? html` checked` : ""}> ${GRANT_NAMES[grant]}</label>`;
  });
  const body = html`${
    created
      ? html`<section class="notice" aria-labelledby="new-client-heading"><h2 id="new-client-heading">Registered “${created.client_name}”</h2>
<label for="new-client-id">Client id</label><input id="new-client-id" type="text" readonly value="${created.client_id}" class="secret">
${
  created.client_secret === null
    ? html`<p>A public client has no secret: it proves itself with PKCE.</p>`
    : html`<p>Copy the client secret now: it is shown only this once and cannot be read back.</p>
<label for="new-client-secret">Client secret</label><input id="new-client-secret" type="text" readonly value="${created.client_secret}" class="secret">`
}</section>`
      : ""
  }
<section aria-labelledby="clients-heading"><h2 id="clients-heading">OAuth clients of ${req.namespace.name}</h2>
${clients.length === 0 ? html`<p>No clients registered.</p>` : html`<ul class="items">${clients.map((client) => clientItem(req, client))}</ul>`}</section>
<form class="card" method="post" action="/console/oauth/clients">
<h2>Register a client</h2>
${formFields(req, "oauth-client-create")}
<label for="client-name">Name</label>
<input id="client-name" name="client_name" type="text" maxlength="200" required value="${valueOf(state, "client_name")}">
<label for="client-type">Type</label>
<select id="client-type" name="client_type">
<option value="confidential"${type === "confidential" ? html` selected` : ""}>Confidential (a server that keeps a secret)</option>
<option value="public"${type === "public" ? html` selected` : ""}>Public (a browser or native app, PKCE only)</option>
</select>
<label for="client-redirect-uris">Redirect URIs, one per line</label>
<textarea id="client-redirect-uris" name="redirect_uris" rows="3" aria-describedby="client-redirect-hint">${valueOf(state, "redirect_uris")}</textarea>
<p class="hint" id="client-redirect-hint">https anywhere, http only on a loopback host, or an app scheme such as com.example.app:/callback.</p>
<fieldset><legend>Grant types</legend>${grantBoxes}</fieldset>
<button type="submit">Register client</button>
</form>
<section aria-labelledby="grants-heading"><h2 id="grants-heading">Live grants</h2>
<p class="hint">Each approval of a device login or a consent, with its access and refresh tokens.</p>
${grants.length === 0 ? html`<p>No live grants.</p>` : html`<ul class="items">${grants.map((grant) => grantItem(req, grant))}</ul>`}</section>`;
  return managementLayout(req, { path: "/console/oauth", title: "OAuth", state, body });
}
