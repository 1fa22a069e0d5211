import type { Namespace } from "../management/namespaces/namespace-service";
import type { ClientPublisher } from "../identity/oauth/oauth-client";
import { formTargetOf } from "./authorize-query";
import { clientPublisherLine } from "./client-publisher";
import { renderPage } from "./console-page";
import { namespaceAndDecision } from "./grant-approval";
import type { ConsoleSession } from "./console-sessions";
import { html } from "./html";
import { scopeList } from "./scope-descriptions";

export interface ConsentRequest {
  clientName: string;
  publisher: ClientPublisher;
  redirectUri: string;
  scopes: readonly string[];
  /** The authorization request's query string, re-checked in full when the form comes back. */
  query: string;
  namespaces: readonly Namespace[];
}

/** The consent page of an authorization request: who asks, for what, bound to which namespace; Allow or Deny. */
export function consentPage(session: ConsoleSession, consent: ConsentRequest): Response {
  const body = html`<h1>Allow ${consent.clientName} to use your account?</h1>
${clientPublisherLine(consent.publisher)}
<form class="card" method="post" action="/oauth/authorize">
<p><strong>${consent.clientName}</strong> asks to:</p>
${scopeList(consent.scopes)}
<p class="hint">Afterwards you go back to <span id="redirect-uri">${consent.redirectUri}</span>.</p>
<input type="hidden" name="csrf_token" value="${session.csrfToken("consent")}">
<input type="hidden" name="authorize_query" value="${consent.query}">
${namespaceAndDecision(consent.namespaces, { value: "allow", label: "Allow" })}
</form>`;
  return renderPage({
    title: "Allow access",
    body,
    signedInAs: session.email,
    signOutToken: session.csrfToken("sign-out"),
    cookies: session.cookies,
    formTargets: [formTargetOf(consent.redirectUri)],
  });
}
