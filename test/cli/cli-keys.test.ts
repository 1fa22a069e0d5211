import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { freshConfigHome, runSwitchyard, startLogin } from "./run-switchyard";

/**
 * `switchyard keys create` as the README shows it: signed in with `switchyard login`, the
 * key is the account's (DESIGN "Keys people make"); with SWITCHYARD_API_KEY it is bounded
 * by that key, and the CLI says so. It prints the expiry of every key it makes.
 */
let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
});
afterAll(() => server.close());

async function signIn(): Promise<Record<string, string>> {
  const env = { SWITCHYARD_URL: server.url, XDG_CONFIG_HOME: freshConfigHome() };
  const login = await startLogin([], env);
  const decided = await server.api("POST", "/oauth/device/decision", { token: account.apiKey, body: { user_code: login.userCode, namespace_id: account.namespaceId, approve: true } });
  expect(decided.status).toBe(200);
  expect((await login.finished).exitCode).toBe(0);
  return env;
}

const tokenOf = (stdout: string) => /^(brk_\S+)$/m.exec(stdout)![1]!;
const works = async (token: string) => (await server.api("GET", "/v1/namespaces/me/keys", { token })).status;

describe("keys create", () => {
  test("signed in through the CLI: the key never expires unless asked, prints its expiry, and keeps working after logout", async () => {
    const env = await signIn();
    const forever = await runSwitchyard(["keys", "create", "--name", "ci", "--scope", "keys:read"], env);
    expect(forever.exitCode).toBe(0);
    expect(forever.stderr).toBe("");
    expect(forever.stdout).toMatch(/^expires {2}never$/m);
    const asked = "2099-01-01T00:00:00Z";
    const dated = await runSwitchyard(["keys", "create", "--name", "ci dated", "--scope", "keys:read", "--expires-at", asked], env);
    expect(dated.exitCode).toBe(0);
    expect(dated.stderr).toBe("");
    expect(dated.stdout).toMatch(/^expires {2}2099-01-01/m);

    const logout = await runSwitchyard(["logout"], env);
    expect(logout.exitCode).toBe(0);
    expect(await works(tokenOf(forever.stdout))).toBe(200);
    expect(await works(tokenOf(dated.stdout))).toBe(200);
    const listed = (await server.api("GET", "/v1/namespaces/me/keys", { token: account.apiKey })).body.data as { display_name: string; expires_at: string | null }[];
    expect(listed.find((key) => key.display_name === "ci")!.expires_at).toBeNull();
    expect(Date.parse(listed.find((key) => key.display_name === "ci dated")!.expires_at!)).toBe(Date.parse(asked));
  });

  test("with SWITCHYARD_API_KEY: the key expires with that key, and the CLI says it is earlier than asked", async () => {
    const parentExpiry = new Date(Date.now() + 2 * 24 * 3600 * 1000).toISOString();
    const parent = await server.api("POST", "/v1/namespaces/me/keys", { token: account.apiKey, body: { display_name: "script", scopes: ["keys:read", "keys:write"], expires_at: parentExpiry } });
    const env = { SWITCHYARD_URL: server.url, XDG_CONFIG_HOME: freshConfigHome(), SWITCHYARD_API_KEY: parent.body.token as string };
    const result = await runSwitchyard(["keys", "create", "--name", "child", "--scope", "keys:read"], env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toMatch(/^expires {2}never$/m);
    expect(result.stderr).toContain("earlier than asked");
    expect(result.stderr).not.toContain("brk_");
  });
});
