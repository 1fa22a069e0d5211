import { html } from "./html";
import { renderPage } from "./console-page";

export interface SignInPageOptions {
  csrfToken: string;
  next: string;
  email?: string;
  error?: string;
  status?: number;
  cookies?: readonly string[];
}

/** The sign-in form: email, password, and where to go afterwards. */
export function signInPage(options: SignInPageOptions): Response {
  const body = html`<h1>Sign in</h1>
${options.error ? html`<p class="error" role="alert" id="sign-in-error">${options.error}</p>` : ""}
<form class="card" method="post" action="/console/sign-in">
<input type="hidden" name="csrf_token" value="${options.csrfToken}">
<input type="hidden" name="next" value="${options.next}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${options.email ?? ""}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<p class="hint">No password yet? The operator of this Switchyard sets one for your account.</p>`;
  return renderPage({ title: "Sign in", body, status: options.status, cookies: options.cookies });
}
