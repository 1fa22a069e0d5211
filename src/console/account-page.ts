import { renderPage } from "./console-page";
import { consoleNav } from "./console-nav";
import type { ConsoleSession } from "./console-sessions";
import { formatTime } from "./format";
import { html } from "./html";

export interface AccountPageOptions {
  namespaceId: string | undefined;
  createdAt: Date;
  notice?: string;
  error?: string;
  status?: number;
}

/** The account page: its email, the display name form, and deleting the account. */
export function accountPage(session: ConsoleSession, options: AccountPageOptions): Response {
  const nsField = options.namespaceId === undefined ? "" : html`<input type="hidden" name="ns" value="${options.namespaceId}">`;
  const body = html`<h1>Account</h1>
${consoleNav("/console/account", options.namespaceId)}
${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ""}
${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ""}
<section aria-labelledby="profile-heading"><h2 id="profile-heading">Profile</h2>
<dl><dt>Email</dt><dd>${session.email}</dd><dt>Display name</dt><dd id="display-name">${session.displayName ?? "(none)"}</dd>
<dt>Created</dt><dd>${formatTime(options.createdAt)}</dd></dl></section>
<form class="card" method="post" action="/console/account">
<input type="hidden" name="csrf_token" value="${session.csrfToken("account")}">${nsField}
<label for="display_name">Display name</label>
<input id="display_name" name="display_name" type="text" maxlength="100" autocomplete="name" value="${session.displayName ?? ""}">
<p class="hint">Up to 100 characters. Leave empty to remove it.</p>
<button type="submit">Save</button>
</form>
<form class="card" method="post" action="/console/account/delete">
<h2>Delete the account</h2>
<p>Every API key, OAuth grant, BYOK key and console session ends at once, and every namespace is archived. This cannot be undone.</p>
<input type="hidden" name="csrf_token" value="${session.csrfToken("account-delete")}">
<label for="confirm_email">Type your email to confirm</label>
<input id="confirm_email" name="confirm_email" type="email" autocomplete="off" required>
<button type="submit" class="danger">Delete my account</button>
</form>`;
  return renderPage({
    title: "Account",
    body,
    status: options.status,
    signedInAs: session.email,
    signOutToken: session.csrfToken("sign-out"),
    cookies: session.cookies,
  });
}
