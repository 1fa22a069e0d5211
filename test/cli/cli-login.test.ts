import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_OAUTH_LIFETIMES } from "../../src/config";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { freshConfigHome, runSwitchyard, startLogin } from "./run-switchyard";

/**
 * `switchyard login` end to end against the real authorization server: the CLI runs as a
 * subprocess, the test reads the user code from its stdout and approves (or denies) it
 * through the decision API with the account's operator-created key, as the console would.
 */
const CLI_DEFAULT_SCOPES = "inference:invoke usage:read keys:read keys:write billing:read policy:read policy:write byok:read byok:write namespace:read";

let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  server = await startTestServer({ oauthLifetimes: { ...DEFAULT_OAUTH_LIFETIMES, devicePollIntervalSecs: 1 } });
  account = await server.createAccount();
});
afterAll(() => server.close());

function decide(userCode: string, namespaceId: string, approve: boolean) {
  return server.api("POST", "/oauth/device/decision", { token: account.apiKey, body: { user_code: userCode, namespace_id: namespaceId, approve } });
}

interface Stored {
  access_token: string;
  refresh_token: string;
  expires_at: string;
  scope: string;
  namespace_id: string;
  account_id: string;
  server: string;
}

const credentialPath = (configHome: string) => join(configHome, "switchyard", "credentials.json");
const readStored = (configHome: string): Stored => JSON.parse(readFileSync(credentialPath(configHome), "utf8"));
const writeStored = (configHome: string, stored: Stored) => writeFileSync(credentialPath(configHome), JSON.stringify(stored));

interface CliEnv {
  SWITCHYARD_URL: string;
  XDG_CONFIG_HOME: string;
  [name: string]: string;
}

/** Signs a fresh config home in through the CLI, approved for `namespaceId`; returns its environment. */
async function signIn(namespaceId = account.namespaceId, args: string[] = [], target: TestServer = server): Promise<CliEnv> {
  const env = { SWITCHYARD_URL: target.url, XDG_CONFIG_HOME: freshConfigHome() };
  const login = await startLogin(args, env);
  const decided = await target.api("POST", "/oauth/device/decision", { token: account.apiKey, body: { user_code: login.userCode, namespace_id: namespaceId, approve: true } });
  expect(decided.body).toEqual({ status: "approved" });
  const result = await login.finished;
  expect(result.stderr).toBe("");
  expect(result.exitCode).toBe(0);
  return env;
}

describe("login", () => {
  test("prints the verification URL, the complete URL and the code, polls until approved, and stores the credential owner-only", async () => {
    const env = { SWITCHYARD_URL: server.url, XDG_CONFIG_HOME: freshConfigHome() };
    const login = await startLogin([], env);
    expect(login.userCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect((await decide(login.userCode, account.namespaceId, true)).status).toBe(200);
    const result = await login.finished;
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    const publicUrl = server.server.services.config.publicUrl;
    expect(result.stdout).toContain(`  ${publicUrl}/oauth/device\n`);
    expect(result.stdout).toContain(`  ${publicUrl}/oauth/device?user_code=${login.userCode}\n`);
    expect(result.stdout).toContain(`Signed in to ${server.url}: account ${account.accountId}, namespace ${account.namespaceId}.`);

    const path = credentialPath(env.XDG_CONFIG_HOME);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(env.XDG_CONFIG_HOME, "switchyard")).mode & 0o777).toBe(0o700);
    const stored = readStored(env.XDG_CONFIG_HOME);
    expect(Object.keys(stored).sort()).toEqual(["access_token", "account_id", "expires_at", "namespace_id", "refresh_token", "scope", "server"]);
    expect(stored).toMatchObject({ account_id: account.accountId, namespace_id: account.namespaceId, scope: CLI_DEFAULT_SCOPES, server: server.url });
    expect(stored.access_token).toStartWith("bra_");
    const lifetime = Date.parse(stored.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(3500_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000);
    // Neither token is ever printed.
    expect(result.stdout).not.toContain(stored.access_token);
    expect(result.stdout).not.toContain(stored.refresh_token);

    const whoami = await runSwitchyard(["whoami", "--json"], env);
    expect(whoami.exitCode).toBe(0);
    expect(JSON.parse(whoami.stdout)).toEqual({ account_id: account.accountId, namespace_id: account.namespaceId, scopes: CLI_DEFAULT_SCOPES.split(" ") });
    const usage = await runSwitchyard(["usage", "--from", "2020-01-01", "--to", "2100-01-01", "--json"], env);
    expect(usage.exitCode).toBe(0);
    const fromRoute = await server.api("GET", `/v1/namespaces/${account.namespaceId}/usage?from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z`, { token: account.apiKey });
    expect(JSON.parse(usage.stdout)).toEqual(fromRoute.body);
  });

  test("a denied approval exits 1 and stores nothing", async () => {
    const env = { SWITCHYARD_URL: server.url, XDG_CONFIG_HOME: freshConfigHome() };
    const login = await startLogin([], env);
    expect((await decide(login.userCode, account.namespaceId, false)).body).toEqual({ status: "denied" });
    const result = await login.finished;
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe("switchyard: the sign-in was denied\n");
    expect(existsSync(credentialPath(env.XDG_CONFIG_HOME))).toBe(false);
  });

  test("a code nobody approves expires: exit 1, and the CLI stops polling at expires_in", async () => {
    const shortLived = await startTestServer({ oauthLifetimes: { ...DEFAULT_OAUTH_LIFETIMES, devicePollIntervalSecs: 1, deviceCodeSecs: 3 } });
    try {
      const env = { SWITCHYARD_URL: shortLived.url, XDG_CONFIG_HOME: freshConfigHome() };
      const started = Date.now();
      const login = await startLogin([], env);
      const result = await login.finished;
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain("the code expired before it was approved");
      // Expiry at 3 s, a poll a second: about 4 s, and a CLI start; room for a loaded machine,
      // far short of polling on past expires_in.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await shortLived.close();
    }
  });

  test("the management commands use the namespace the sign-in was approved for", async () => {
    const second = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: `cli-${Date.now()}` } });
    expect(second.status).toBe(200);
    const env = await signIn(second.body.id);
    expect(readStored(env.XDG_CONFIG_HOME).namespace_id).toBe(second.body.id);

    const created = await runSwitchyard(["keys", "create", "--name", "from the cli", "--scope", "inference:invoke", "--json"], env);
    expect(created.exitCode).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key.token).toStartWith("brk_");
    const inSecond = await server.api("GET", `/v1/namespaces/${second.body.id}/keys`, { token: account.apiKey });
    expect(inSecond.body.data.map((entry: { id: string }) => entry.id)).toContain(key.id);
    const inFirst = await server.api("GET", `/v1/namespaces/${account.namespaceId}/keys`, { token: account.apiKey });
    expect(inFirst.body.data.map((entry: { id: string }) => entry.id)).not.toContain(key.id);

    const listed = await runSwitchyard(["keys", "list", "--json"], env);
    expect(JSON.parse(listed.stdout)).toEqual(inSecond.body);
    const revoked = await runSwitchyard(["keys", "revoke", key.id], env);
    expect(revoked.exitCode).toBe(0);
    expect(revoked.stdout).toBe(`Revoked key ${key.id}.\n`);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: key.token })).status).toBe(401);
  });

  test("byok set through a sign-in stores a key the server opens to exactly what was piped", async () => {
    const env = await signIn();
    const result = await runSwitchyard(["byok", "set", "openai"], env, "sk-proj-oauth-path-secret-42\n");
    expect(result.exitCode).toBe(0);
    expect(result.stdout + result.stderr).not.toContain("oauth-path-secret");
    // The sign-in is bound to the account's namespace: the key is that namespace's.
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "openai", account.namespaceId)).toBe("sk-proj-oauth-path-secret-42");
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "openai")).toBeUndefined();
  });

  test("a missing scope exits 1 and the hint is the login command with the current scopes plus the missing one", async () => {
    const env = await signIn(account.namespaceId, ["--scope", "usage:read policy:read"]);
    expect(readStored(env.XDG_CONFIG_HOME).scope).toBe("usage:read policy:read");
    const result = await runSwitchyard(["keys", "list"], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe('switchyard: missing required scope: keys:read\nhint: sign in again with that scope added: switchyard login --scope "usage:read policy:read keys:read"\n');
  });

  test("SWITCHYARD_API_KEY overrides the stored sign-in; a SWITCHYARD_URL other than the sign-in's is refused", async () => {
    const env = await signIn();
    const key = await server.mintKey(account.apiKey, ["keys:read", "usage:read"]);
    const withKey = await runSwitchyard(["whoami", "--json"], { ...env, SWITCHYARD_API_KEY: key });
    expect(JSON.parse(withKey.stdout)).toMatchObject({ api_key_id: `k_${key.slice(4).split(".")[0]}`, scopes: ["keys:read", "usage:read"] });
    const elsewhere = await runSwitchyard(["keys", "list"], { ...env, SWITCHYARD_URL: "http://127.0.0.1:1" });
    expect(elsewhere.exitCode).toBe(1);
    expect(elsewhere.stderr).toContain(`not signed in to http://127.0.0.1:1 (the stored sign-in is for ${server.url})`);
    expect(elsewhere.stderr).toContain("switchyard login");
  });

  test("signing in again revokes the sign-in it replaces", async () => {
    const env = await signIn();
    const first = readStored(env.XDG_CONFIG_HOME);
    const login = await startLogin([], env);
    expect((await decide(login.userCode, account.namespaceId, true)).status).toBe(200);
    expect((await login.finished).exitCode).toBe(0);
    expect(readStored(env.XDG_CONFIG_HOME).access_token).not.toBe(first.access_token);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: first.access_token })).status).toBe(401);
  });
});

describe("token refresh", () => {
  test("a token within 60 s of expiry is refreshed before use: the stored tokens rotate and the file stays 0600", async () => {
    const env = await signIn();
    const before = readStored(env.XDG_CONFIG_HOME);
    writeStored(env.XDG_CONFIG_HOME, { ...before, expires_at: new Date(Date.now() + 30_000).toISOString() });
    const result = await runSwitchyard(["keys", "list", "--json"], env);
    expect(result.exitCode).toBe(0);
    const after = readStored(env.XDG_CONFIG_HOME);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.access_token).not.toBe(before.access_token);
    expect(Date.parse(after.expires_at) - Date.now()).toBeGreaterThan(3500_000);
    expect({ ...after, access_token: "", refresh_token: "", expires_at: "" }).toEqual({ ...before, access_token: "", refresh_token: "", expires_at: "" });
    expect(statSync(credentialPath(env.XDG_CONFIG_HOME)).mode & 0o777).toBe(0o600);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: after.access_token })).status).toBe(200);
  });

  test("a token the server no longer accepts (401) is refreshed once and the call retried", async () => {
    const shortLived = await startTestServer({ oauthLifetimes: { ...DEFAULT_OAUTH_LIFETIMES, devicePollIntervalSecs: 1, accessTokenSecs: 1 } }, { url: server.databaseUrl, drop: async () => {} });
    try {
      const env = await signIn(account.namespaceId, [], shortLived);
      const before = readStored(env.XDG_CONFIG_HOME);
      // The file claims an hour (a clock that runs slow); the server says the token expired.
      writeStored(env.XDG_CONFIG_HOME, { ...before, expires_at: new Date(Date.now() + 3600_000).toISOString() });
      await Bun.sleep(1_500);
      expect((await shortLived.api("GET", "/v1/namespaces/me/keys", { token: before.access_token })).status).toBe(401);
      const result = await runSwitchyard(["keys", "list", "--json"], env);
      expect(result.stderr).toBe("");
      expect(result.exitCode).toBe(0);
      expect(readStored(env.XDG_CONFIG_HOME).refresh_token).not.toBe(before.refresh_token);
    } finally {
      await shortLived.close();
    }
  });

  test("commands refreshing at the same moment share one refresh: all succeed and the grant survives", async () => {
    const env = await signIn();
    const before = readStored(env.XDG_CONFIG_HOME);
    writeStored(env.XDG_CONFIG_HOME, { ...before, expires_at: new Date(Date.now() - 1_000).toISOString() });
    const results = await Promise.all(Array.from({ length: 4 }, () => runSwitchyard(["keys", "list", "--json"], env)));
    for (const result of results) {
      expect(result.stderr).toBe("");
      expect(result.exitCode).toBe(0);
    }
    const after = readStored(env.XDG_CONFIG_HOME);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: after.access_token })).status).toBe(200);
    expect((await runSwitchyard(["whoami"], env)).exitCode).toBe(0);
  });

  test("a refresh the server refuses (revoked grant) exits 1 telling the user to run switchyard login", async () => {
    const env = await signIn();
    const stored = readStored(env.XDG_CONFIG_HOME);
    const revoked = await fetch(`${server.url}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: stored.refresh_token, token_type_hint: "refresh_token", client_id: "switchyard-cli" }),
    });
    expect(revoked.status).toBe(200);
    writeStored(env.XDG_CONFIG_HOME, { ...stored, expires_at: new Date(Date.now() - 1_000).toISOString() });
    const result = await runSwitchyard(["keys", "list"], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("your sign-in has expired or was revoked");
    expect(result.stderr).toContain("hint: run `switchyard login` to sign in");
  });
});

describe("logout", () => {
  test("revokes the grant at the server (the old access token gets 401), deletes the file; a second logout exits 1", async () => {
    const env = await signIn();
    const stored = readStored(env.XDG_CONFIG_HOME);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: stored.access_token })).status).toBe(200);
    const result = await runSwitchyard(["logout"], env);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`Signed out of ${server.url}; the stored credential is deleted.\n`);
    expect(existsSync(credentialPath(env.XDG_CONFIG_HOME))).toBe(false);
    expect((await server.api("GET", "/v1/namespaces/me/keys", { token: stored.access_token })).status).toBe(401);
    const refresh = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: stored.refresh_token, client_id: "switchyard-cli" }),
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");

    const again = await runSwitchyard(["logout"], env);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain("switchyard login");
  });

  test("logout ignores SWITCHYARD_API_KEY and keeps the credential when the server cannot be reached", async () => {
    const env = await signIn();
    const stored = readStored(env.XDG_CONFIG_HOME);
    writeStored(env.XDG_CONFIG_HOME, { ...stored, server: "http://127.0.0.1:1" });
    const unreachable = await runSwitchyard(["logout"], { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME, SWITCHYARD_API_KEY: account.apiKey });
    expect(unreachable.exitCode).toBe(1);
    expect(unreachable.stderr).toContain("cannot reach the Switchyard server at http://127.0.0.1:1");
    expect(existsSync(credentialPath(env.XDG_CONFIG_HOME))).toBe(true);
  });
});
