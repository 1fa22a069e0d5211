import type { TestServer } from "./test-server";
import { createAccountWithPassword, signInOverHttp } from "./console-http";

export const CONSOLE_PASSWORD = "correct horse battery staple";

/** A signed-in console user over plain HTTP: the account, its API key and the session cookie. */
export interface ConsoleUser {
  email: string;
  accountId: string;
  namespaceId: string;
  apiKey: string;
  cookie: string;
}

export async function signedInUser(server: TestServer, creditMicroUsd = 0): Promise<ConsoleUser> {
  const account = await createAccountWithPassword(server, CONSOLE_PASSWORD, creditMicroUsd);
  const { session } = await signInOverHttp(server, account.email, CONSOLE_PASSWORD);
  if (!session) throw new Error("sign-in set no session");
  return { ...account, cookie: session };
}

export async function getPage(server: TestServer, user: ConsoleUser, path: string): Promise<{ status: number; text: string; response: Response }> {
  const response = await fetch(server.url + path, { headers: { cookie: user.cookie }, redirect: "manual" });
  return { status: response.status, text: await response.text(), response };
}

/** The CSRF token of the (first) form on `page` that posts to `action`. */
export function formToken(page: string, action: string): string {
  // A posting form first: a GET form (the namespace picker) may name the same page, and the
  // token after it would be another form's.
  const posting = page.indexOf(`method="post" action="${action}"`);
  const at = posting >= 0 ? posting : page.indexOf(`action="${action}"`);
  if (at < 0) throw new Error(`no form posts to ${action}`);
  const match = /name="csrf_token" value="([^"]+)"/.exec(page.slice(at));
  if (!match) throw new Error(`the form posting to ${action} has no CSRF token`);
  return match[1]!;
}

/** Posts a form as a browser would (urlencoded, the session cookie, no redirect followed). */
export async function postForm(server: TestServer, user: ConsoleUser, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(server.url + path, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: user.cookie, origin: server.url, ...headers },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, text: await response.text(), location: response.headers.get("location"), response };
}

/** Reads the page holding the form for `action`, then posts it with that form's token and the namespace field. */
export async function submitForm(server: TestServer, user: ConsoleUser, pagePath: string, action: string, fields: Record<string, string>) {
  const page = await getPage(server, user, pagePath);
  if (page.status !== 200) throw new Error(`${pagePath}: ${page.status}`);
  return postForm(server, user, action, { csrf_token: formToken(page.text, action), ns: user.namespaceId, ...fields });
}
