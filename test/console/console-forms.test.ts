import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../support/test-server";
import { consoleForm, createAccountWithPassword, signInOverHttp, setCookies } from "../support/console-http";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
// Every test here fails sign-ins from the same loopback address; each starts with a clean count.
beforeEach(async () => {
  await server.server.services.db.sql`delete from auth_throttle`;
});

const PASSWORD = "correct horse battery staple";

describe("the sign-in page", () => {
  test("carries the console's security headers, labels for every input, and sets no session cookie", async () => {
    const response = await fetch(`${server.url}/console`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = response.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const page = await response.text();
    expect(page).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    for (const id of ["email", "password"]) expect(page).toContain(`<label for="${id}">`);
    expect(page).not.toMatch(/<script|https?:\/\/(?!www\.w3)/);
    const cookies = setCookies(response);
    expect(cookies.some((cookie) => cookie.startsWith("switchyard_session="))).toBe(false);
    expect(cookies.some((cookie) => cookie.startsWith("switchyard_sign_in="))).toBe(true);
  });
});

describe("signing in", () => {
  test("the right password sets an HttpOnly, SameSite=Lax session cookie (not Secure over an http PUBLIC_URL) and shows the overview", async () => {
    const account = await createAccountWithPassword(server, PASSWORD, 5_000_000);
    const { response, session } = await signInOverHttp(server, account.email, PASSWORD);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/console");
    const cookie = setCookies(response).find((value) => value.startsWith("switchyard_session="))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/; Max-Age=43200/);
    expect(cookie).not.toMatch(/Secure/);
    const overview = await fetch(`${server.url}/console`, { headers: { cookie: session! } });
    const page = await overview.text();
    expect(page).toContain(account.email);
    expect(page).toContain("$5.00");
    // The session is stored as a hash only.
    const token = session!.split("=")[1]!;
    const rows = await server.server.services.db.sql<{ token_hash: Uint8Array }[]>`select token_hash from console_sessions where account_id = ${account.accountId}`;
    expect(rows.length).toBe(1);
    expect(Buffer.from(rows[0]!.token_hash).toString("base64url")).not.toBe(token);
  });

  test("a wrong password, an unknown email and an account without a password get the same 401 page and no session", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const withoutPassword = `nopw-${Date.now()}@example.test`;
    await server.createAccount(withoutPassword);
    const bodies: string[] = [];
    for (const [email, password] of [
      [account.email, "not the right password"],
      [`nobody-${Date.now()}@example.test`, PASSWORD],
      [withoutPassword, PASSWORD],
    ] as const) {
      const { response, session, page } = await signInOverHttp(server, email, password);
      expect(response.status).toBe(401);
      expect(session).toBeUndefined();
      expect(page).toContain("Email or password is incorrect.");
      bodies.push(page.replace(/value="[^"]*"/g, ""));
    }
    expect(new Set(bodies).size).toBe(1);
  });

  test("the email is matched without regard to case", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const { response } = await signInOverHttp(server, account.email.toUpperCase(), PASSWORD);
    expect(response.status).toBe(303);
  });

  test("over an https PUBLIC_URL the session cookie is Secure (seen in Set-Cookie over plain HTTP)", async () => {
    const secure = await startTestServer({ publicUrl: "https://console.example.test" });
    try {
      const account = await createAccountWithPassword(secure, PASSWORD);
      const { response } = await signInOverHttp(secure, account.email, PASSWORD);
      expect(response.status).toBe(303);
      const cookie = setCookies(response).find((value) => value.startsWith("switchyard_session="))!;
      expect(cookie).toMatch(/; Secure/);
      expect(cookie).toMatch(/; HttpOnly/);
    } finally {
      await secure.close();
    }
  });

  test("?next= goes back to a path on this server, never to another host", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const cases: Array<[string, string]> = [
      ["/console/account?ns=x", "/console/account?ns=x"],
      ["/oauth/device?user_code=ABCD-EFGH", "/oauth/device?user_code=ABCD-EFGH"],
      ["//evil.example", "/console"],
      ["/\\evil.example", "/console"],
      ["https://evil.example/", "/console"],
      ["javascript:alert(1)", "/console"],
      ["/\t/evil.example", "/console"],
      ["", "/console"],
    ];
    for (const [next, expected] of cases) {
      const { response } = await signInOverHttp(server, account.email, PASSWORD, { next });
      expect(response.headers.get("location")).toBe(expected);
    }
  });
});

describe("cross-site request forgery", () => {
  test("a sign-in without the form's token, with a token for another browser, or with a foreign Origin is a 403 page and sets no session", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const form = await consoleForm(server.url);
    const attempts: Array<{ headers: Record<string, string>; fields: Record<string, string> }> = [
      { headers: { cookie: form.cookie }, fields: {} },
      { headers: {}, fields: { csrf_token: form.token } },
      { headers: { cookie: (await consoleForm(server.url)).cookie }, fields: { csrf_token: form.token } },
      { headers: { cookie: form.cookie, origin: "https://evil.example" }, fields: { csrf_token: form.token } },
    ];
    for (const attempt of attempts) {
      const response = await fetch(`${server.url}/console/sign-in`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", ...attempt.headers },
        body: new URLSearchParams({ email: account.email, password: PASSWORD, ...attempt.fields }),
      });
      expect(response.status).toBe(403);
      expect(await response.text()).toContain("did not come from this site");
      expect(setCookies(response).some((cookie) => cookie.startsWith("switchyard_session="))).toBe(false);
    }
    // The same form with its cookie and its token, from a page whose referrer policy makes the browser send `Origin: null`, works.
    const ok = await signInOverHttp(server, account.email, PASSWORD, { origin: "null" });
    expect(ok.response.status).toBe(303);
  });

  test("signing out needs the session's token and this site's Origin; then the session is gone", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const { session } = await signInOverHttp(server, account.email, PASSWORD);
    const overview = await (await fetch(`${server.url}/console`, { headers: { cookie: session! } })).text();
    const token = /name="csrf_token" value="([^"]+)"/.exec(overview)![1]!;
    const post = (headers: Record<string, string>, fields: Record<string, string>) =>
      fetch(`${server.url}/console/sign-out`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", cookie: session!, ...headers }, body: new URLSearchParams(fields) });
    const withoutToken = await post({}, {});
    expect(withoutToken.status).toBe(403);
    expect(await withoutToken.text()).toContain("Request refused");
    expect((await post({ origin: "https://evil.example" }, { csrf_token: token })).status).toBe(403);
    expect((await post({}, { csrf_token: "x".repeat(43) })).status).toBe(403);
    // Still signed in after the refusals.
    expect(await (await fetch(`${server.url}/console`, { headers: { cookie: session! } })).text()).toContain(account.email);
    const out = await post({ origin: server.url }, { csrf_token: token });
    expect(out.status).toBe(303);
    expect(setCookies(out).find((cookie) => cookie.startsWith("switchyard_session="))).toMatch(/Max-Age=0/);
    expect(await (await fetch(`${server.url}/console`, { headers: { cookie: session! } })).text()).toContain("Sign in");
  });
});

describe("sessions and the JSON API", () => {
  test("a console session never authenticates the JSON API", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const { session } = await signInOverHttp(server, account.email, PASSWORD);
    for (const path of ["/v1/account", "/v1/namespaces", "/v1/billing/balance"]) {
      const response = await fetch(`${server.url}${path}`, { headers: { cookie: session! } });
      expect(response.status).toBe(401);
    }
  });

  test("a session ends with the account: deleting it through the API signs the browser out", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const { session } = await signInOverHttp(server, account.email, PASSWORD);
    expect((await server.api("DELETE", "/v1/account", { token: account.apiKey })).status).toBe(200);
    expect(await (await fetch(`${server.url}/console`, { headers: { cookie: session! } })).text()).toContain("Sign in");
    const again = await signInOverHttp(server, account.email, PASSWORD);
    expect(again.response.status).toBe(401);
  });
});

describe("session lifetime", () => {
  test("a session in use slides its 12-hour expiry forward and re-sends the cookie; an expired one shows the sign-in form", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const { session } = await signInOverHttp(server, account.email, PASSWORD);
    const sql = server.server.services.db.sql;
    await sql`update console_sessions set last_seen_at = now() - interval '6 minutes', expires_at = now() + interval '1 minute' where account_id = ${account.accountId}`;
    const used = await fetch(`${server.url}/console`, { headers: { cookie: session! } });
    expect(await used.text()).toContain(account.email);
    expect(setCookies(used).find((cookie) => cookie.startsWith("switchyard_session="))).toMatch(/Max-Age=43200/);
    const [row] = await sql<{ hours: number }[]>`select extract(epoch from expires_at - now()) / 3600 as hours from console_sessions where account_id = ${account.accountId}`;
    expect(Number(row!.hours)).toBeGreaterThan(11.9);
    // Used again at once: no write, no new cookie.
    expect(setCookies(await fetch(`${server.url}/console`, { headers: { cookie: session! } })).length).toBe(0);
    await sql`update console_sessions set expires_at = now() - interval '1 second' where account_id = ${account.accountId}`;
    expect(await (await fetch(`${server.url}/console`, { headers: { cookie: session! } })).text()).toContain("<h1>Sign in</h1>");
  });
});

describe("the account page", () => {
  test("deleting the account needs the form's token and the email typed; then the account and the session are gone", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const { session } = await signInOverHttp(server, account.email, PASSWORD);
    const page = await (await fetch(`${server.url}/console/account`, { headers: { cookie: session! } })).text();
    const token = /action="\/console\/account\/delete"[\s\S]*?name="csrf_token" value="([^"]+)"/.exec(page)![1]!;
    const post = (fields: Record<string, string>) =>
      fetch(`${server.url}/console/account/delete`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", cookie: session! }, body: new URLSearchParams(fields) });
    expect((await post({ confirm_email: account.email })).status).toBe(403);
    expect((await post({ csrf_token: token, confirm_email: "someone-else@example.test" })).status).toBe(400);
    expect((await server.api("GET", "/v1/account", { token: account.apiKey })).status).toBe(200);
    const deleted = await post({ csrf_token: token, confirm_email: account.email.toUpperCase() });
    expect(deleted.status).toBe(303);
    expect(setCookies(deleted).find((cookie) => cookie.startsWith("switchyard_session="))).toMatch(/Max-Age=0/);
    expect((await server.api("GET", "/v1/account", { token: account.apiKey })).status).toBe(401);
  });
});

describe("escaping", () => {
  test("markup in a display name or a typed email is shown as text, never run", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    expect((await server.api("PATCH", "/v1/account", { token: account.apiKey, body: { display_name: hostile } })).status).toBe(200);
    const { session } = await signInOverHttp(server, account.email, PASSWORD);
    const page = await (await fetch(`${server.url}/console/account`, { headers: { cookie: session! } })).text();
    expect(page).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(page).not.toContain("<script");
    expect(page).not.toContain("<img");
    const failed = await signInOverHttp(server, `"><script>alert(1)</script>@example.test`, "wrong password here");
    expect(failed.page).not.toContain("<script");
    expect(failed.page).toContain("&quot;&gt;&lt;script&gt;");
  });
});

describe("the throttle", () => {
  test("30 failed sign-ins from one address lock that address out, whatever the emails, even for a right password", async () => {
    const account = await createAccountWithPassword(server, PASSWORD);
    for (let i = 0; i < 30; i++) {
      const { response } = await signInOverHttp(server, `guess-${i}-${Date.now()}@example.test`, "a wrong password");
      expect(response.status).toBe(401);
    }
    const locked = await signInOverHttp(server, account.email, PASSWORD);
    expect(locked.response.status).toBe(429);
    expect(Number(locked.response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(locked.page).toContain("Too many failed sign-ins");
    expect(locked.session).toBeUndefined();
  }, 60_000);
});
