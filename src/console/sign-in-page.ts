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
<section aria-labelledby="no-account-heading"><h2 id="no-account-heading">No account yet?</h2>
<p>The operator of this Switchyard creates accounts on the server:</p>
<pre><code>npm run admin -- create-account --email you@example.com --password-stdin</code></pre>
<p class="hint">It reads the password from standard input and prints the account's id and an API key.
An existing account gets a password with <code>npm run admin -- set-password &lt;account_id&gt;</code>.</p></section>`;
  return renderPage({ title: "Sign in", body, status: options.status, cookies: options.cookies });
}
