import type { Namespace } from "../management/namespaces/namespace-service";
import type { ClientPublisher } from "../identity/oauth/oauth-client";
import { clientPublisherLine } from "./client-publisher";
import { renderPage } from "./console-page";
import { namespaceAndDecision } from "./grant-approval";
import type { ConsoleSession } from "./console-sessions";
import { html, type SafeHtml } from "./html";
import { scopeList } from "./scope-descriptions";
import { DEVICE_DECISION_PURPOSE } from "./session-approver";

function page(session: ConsoleSession, title: string, body: SafeHtml, status = 200, head?: SafeHtml): Response {
  return renderPage({ title, body, head, status, signedInAs: session.email, signOutToken: session.csrfToken("sign-out"), cookies: session.cookies });
}

/** Step one: type the code the device shows (prefilled from `?user_code=`). */
export function deviceCodeEntryPage(session: ConsoleSession, options: { userCode?: string; error?: string; status?: number } = {}): Response {
  const body = html`<h1>Connect a device</h1>
${options.error ? html`<p class="error" role="alert" id="device-error">${options.error}</p>` : ""}
<form class="card" method="get" action="/oauth/device">
<label for="user_code">Code shown on your device</label>
<input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" required placeholder="XXXX-XXXX" value="${options.userCode ?? ""}" ${options.userCode ? "" : html`autofocus`}>
<button type="submit">Continue</button>
</form>`;
  return page(session, "Connect a device", body, options.status);
}

export interface DeviceConfirmation {
  userCode: string;
  clientName: string;
  publisher: ClientPublisher;
  scopes: readonly string[];
  namespaces: readonly Namespace[];
}

/** Step two: who is asking, for what, bound to which namespace; Approve or Deny. */
export function deviceConfirmationPage(session: ConsoleSession, device: DeviceConfirmation): Response {
  const body = html`<h1>Connect ${device.clientName}?</h1>
${clientPublisherLine(device.publisher)}
<form class="card" method="post" action="/oauth/device">
<p>Check that your device shows this code:</p>
<p class="code" id="device-user-code">${device.userCode}</p>
<p><strong>${device.clientName}</strong> will be able to:</p>
${scopeList(device.scopes)}
<input type="hidden" name="csrf_token" value="${session.csrfToken("device")}">
<input type="hidden" name="user_code" value="${device.userCode}">
${namespaceAndDecision(device.namespaces, { value: "approve", label: "Approve" })}
</form>`;
  return page(session, "Connect a device", body, 200, html`<meta name="csrf-token" content="${session.csrfToken(DEVICE_DECISION_PURPOSE)}">`);
}

/** After the decision. */
export function deviceDonePage(session: ConsoleSession, approved: boolean): Response {
  const title = approved ? "Device connected" : "Device not connected";
  const result = approved ? "Approved: the device is connected." : "Denied: nothing was connected.";
  return page(session, title, html`<h1>${title}</h1><p class="notice" role="status" id="device-result">${result} You can return to your terminal.</p>`);
}
