import { html } from "./html";
import { renderPage } from "./console-page";

/** A readable page for a refusal or a failure: what happened and where to go next. */
export function errorPage(status: number, title: string, message: string, options: { signedInAs?: string; retryAfterSecs?: number } = {}): Response {
  const body = html`<h1>${title}</h1><p class="error" role="alert">${message}</p><p><a href="/console">Back to the console</a></p>`;
  const response = renderPage({ title, body, status, signedInAs: options.signedInAs });
  if (options.retryAfterSecs !== undefined) response.headers.set("retry-after", String(options.retryAfterSecs));
  return response;
}
