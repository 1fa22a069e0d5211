import { TEST_ADMIN_TOKEN, type TestServer } from "./test-server";

/** Every Set-Cookie value of a response. */
export function setCookies(response: Response): string[] {
  return response.headers.getSetCookie();
}

/** The sign-in form as a browser gets it: its signed-in-to-nothing cookie and its CSRF token. */
export async function consoleForm(baseUrl: string): Promise<{ cookie: string; token: string }> {
  const response = await fetch(`${baseUrl}/console`);
  const page = await response.text();
  const cookie = setCookies(response).find((value) => value.startsWith("switchyard_sign_in="))!.split(";")[0]!;
  const token = /name="csrf_token" value="([^"]+)"/.exec(page)![1]!;
  return { cookie, token };
}

let counter = 0;

/** An account with a console password (and an account-wide API key). */
export async function createAccountWithPassword(server: Pick<TestServer, "api">, password: string, creditMicroUsd = 0) {
  const email = `console-${++counter}-${Date.now()}@example.test`;
  const response = await server.api("POST", "/admin/accounts", { token: TEST_ADMIN_TOKEN, body: { email, password, credit_micro_usd: creditMicroUsd } });
  if (response.status !== 200) throw new Error(`account creation failed: ${response.status} ${response.text}`);
  return { email, accountId: response.body.account_id as string, namespaceId: response.body.namespace_id as string, apiKey: response.body.api_key as string };
}

/**
 * Submits the sign-in form over plain HTTP the way a browser would (its cookie and token,
 * no redirect followed). `session` is the `switchyard_session=…` pair when one was set.
 */
export async function signInOverHttp(server: Pick<TestServer, "url">, email: string, password: string, options: { next?: string; origin?: string } = {}) {
  const form = await consoleForm(server.url);
  const response = await fetch(`${server.url}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: form.cookie, ...(options.origin ? { origin: options.origin } : {}) },
    body: new URLSearchParams({ email, password, csrf_token: form.token, next: options.next ?? "" }),
  });
  const session = setCookies(response)
    .find((value) => value.startsWith("switchyard_session="))
    ?.split(";")[0];
  return { response, session, page: await response.text() };
}

/** A fresh account with a password, signed in: its ids, key and `cookie` (the session pair). */
export async function signedInAccount(server: Pick<TestServer, "api" | "url">, password: string) {
  const account = await createAccountWithPassword(server, password);
  const { session } = await signInOverHttp(server, account.email, password);
  return { ...account, cookie: session! };
}
