import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { freshConfigHome, runSwitchyard } from "./run-switchyard";

/**
 * The CLI as a subprocess against a real server, authenticated with SWITCHYARD_API_KEY
 * (the path scripts and CI take). What it prints with --json is compared with what the
 * route itself answers.
 */
let harness: InferenceHarness;
let env: Record<string, string>;

beforeAll(async () => {
  harness = await startInferenceHarness();
  env = { SWITCHYARD_URL: harness.server.url, SWITCHYARD_API_KEY: harness.account.apiKey, XDG_CONFIG_HOME: freshConfigHome() };
  for (let i = 0; i < 2; i++) {
    const response = await harness.server.api("POST", "/v1/chat/completions", {
      token: harness.account.apiKey,
      body: { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] },
    });
    expect(response.status).toBe(200);
  }
  await harness.server.server.services.writeBuffer.flush();
});
afterAll(() => harness.close());

describe("keys", () => {
  test("create prints the new token once; the token works; list shows the key; revoke stops it", async () => {
    const created = await runSwitchyard(["keys", "create", "--name", "ci deploy", "--scope", "keys:read", "--scope", "usage:read inference:invoke"], env);
    expect(created.stderr).toBe("");
    expect(created.exitCode).toBe(0);
    const token = /^(brk_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/m.exec(created.stdout)?.[1];
    expect(token).toBeDefined();
    const id = /^id\s+(k_\S+)$/m.exec(created.stdout)?.[1]!;
    expect(created.stdout).toContain("keys:read usage:read inference:invoke");

    // The minted key is a real one: it lists the namespace's keys itself.
    const listedByNewKey = await runSwitchyard(["keys", "list", "--json"], { ...env, SWITCHYARD_API_KEY: token! });
    expect(listedByNewKey.exitCode).toBe(0);
    const fromRoute = await harness.server.api("GET", "/v1/namespaces/me/keys", { token: token! });
    expect(JSON.parse(listedByNewKey.stdout)).toEqual(fromRoute.body);
    expect(listedByNewKey.stdout).not.toContain(token!.split(".")[1]!);

    const table = await runSwitchyard(["keys", "list"], env);
    expect(table.exitCode).toBe(0);
    const header = table.stdout.split("\n")[0]!;
    expect(header).toMatch(/^ID\s+NAME\s+PREFIX\s+STATE\s+SCOPES\s+CREATED\s+LAST USED\s+EXPIRES$/);
    const row = table.stdout.split("\n").find((line) => line.startsWith(id))!;
    expect(row).toContain("ci deploy");
    expect(row).toContain("active");
    // Columns are aligned: every row's NAME starts where the header's does.
    expect(row.indexOf("ci deploy")).toBe(header.indexOf("NAME"));

    const revoked = await runSwitchyard(["keys", "revoke", id, "--json"], env);
    expect(revoked.exitCode).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: true });
    expect((await harness.server.api("GET", "/v1/namespaces/me/keys", { token: token! })).status).toBe(401);
    const afterRevoke = await runSwitchyard(["keys", "list"], { ...env, SWITCHYARD_API_KEY: token! });
    expect(afterRevoke.exitCode).toBe(1);
    expect(afterRevoke.stderr).toContain("SWITCHYARD_API_KEY was refused");
  });

  test("revoking an id that is not the namespace's exits 1 with the server's description", async () => {
    const result = await runSwitchyard(["keys", "revoke", "k_doesnotexist"], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe("switchyard: key not found\n");
  });

  test("a scope the caller does not hold is refused by the server, exit 1", async () => {
    const narrow = await harness.server.mintKey(harness.account.apiKey, ["keys:read", "keys:write"]);
    const result = await runSwitchyard(["keys", "create", "--name", "wider", "--scope", "billing:read"], { ...env, SWITCHYARD_API_KEY: narrow });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("cannot grant scope not held by the caller: billing:read");
  });
});

describe("usage and requests", () => {
  test("usage --json prints the route's body; the table shows the spend in USD to the micro-dollar", async () => {
    const window = ["--from", "2020-01-01", "--to", "2100-01-01T00:00:00Z"];
    const json = await runSwitchyard(["usage", ...window, "--json"], env);
    expect(json.exitCode).toBe(0);
    const fromRoute = await harness.server.api("GET", "/v1/namespaces/me/usage?from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z", { token: harness.account.apiKey });
    expect(JSON.parse(json.stdout)).toEqual(fromRoute.body);
    const usage = fromRoute.body as { request_count: number; spend_micro_usd: number };
    expect(usage.request_count).toBe(2);
    expect(usage.spend_micro_usd).toBeGreaterThan(0);

    const table = await runSwitchyard(["usage", ...window], env);
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toMatch(/^requests\s+2$/m);
    const dollars = Math.floor(usage.spend_micro_usd / 1_000_000);
    const micro = String(usage.spend_micro_usd % 1_000_000).padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
    expect(table.stdout).toContain(`$${dollars}.${micro} (${usage.spend_micro_usd.toLocaleString("en-US")} micro-USD)`);
  });

  test("a malformed --from is bad usage (exit 2) and never reaches the server", async () => {
    const result = await runSwitchyard(["usage", "--from", "last tuesday"], env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("--from must be a date");
    expect(result.stderr).toContain("usage: switchyard usage");
  });

  test("requests --limit 1 --json prints the route's body; the table lists model, tokens and charge", async () => {
    const json = await runSwitchyard(["requests", "--limit", "1", "--json"], env);
    expect(json.exitCode).toBe(0);
    const fromRoute = await harness.server.api("GET", "/v1/namespaces/me/requests?limit=1", { token: harness.account.apiKey });
    expect(JSON.parse(json.stdout)).toEqual(fromRoute.body);
    expect(fromRoute.body.data).toHaveLength(1);

    const table = await runSwitchyard(["requests"], env);
    expect(table.exitCode).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^CREATED\s+REQUEST ID\s+MODEL\s+PROVIDER\s+STATUS\s+IN\s+OUT\s+CHARGE\s+FUNDING$/);
    expect(lines).toHaveLength(3);
    const record = fromRoute.body.data[0];
    expect(lines[1]).toContain(record.request_id);
    expect(lines[1]).toContain(record.model_id);
    expect(lines[1]).toContain("cloud_credit");
    expect(lines[1]).toMatch(/\$0\.\d{2,6}/);
  });

  test("--limit out of range is bad usage", async () => {
    const result = await runSwitchyard(["requests", "--limit", "0"], env);
    expect(result.exitCode).toBe(2);
  });
});

describe("errors", () => {
  test("a missing scope exits 1 with the server's description and names the scope in the hint", async () => {
    const usageOnly = await harness.server.mintKey(harness.account.apiKey, ["usage:read"]);
    const result = await runSwitchyard(["keys", "list"], { ...env, SWITCHYARD_API_KEY: usageOnly });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe("switchyard: missing required scope: keys:read\nhint: SWITCHYARD_API_KEY lacks keys:read: use a key minted with that scope\n");
    expect(result.stdout).toBe("");
  });

  test("a server that is not there exits 1 naming SWITCHYARD_URL", async () => {
    const result = await runSwitchyard(["keys", "list"], { ...env, SWITCHYARD_URL: "http://127.0.0.1:1" });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("cannot reach the Switchyard server at http://127.0.0.1:1 (connection refused)");
    expect(result.stderr).toContain("SWITCHYARD_URL");
  });

  test("no credential at all exits 1 and says to run switchyard login", async () => {
    const result = await runSwitchyard(["keys", "list"], { SWITCHYARD_URL: harness.server.url, XDG_CONFIG_HOME: freshConfigHome() });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("not signed in");
    expect(result.stderr).toContain("switchyard login");
  });

  test("a SWITCHYARD_API_KEY that is not a brk_ key is refused before any request", async () => {
    const result = await runSwitchyard(["keys", "list"], { ...env, SWITCHYARD_API_KEY: "sk-not-ours", SWITCHYARD_URL: "http://127.0.0.1:1" });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("SWITCHYARD_API_KEY is not a Switchyard API key");
    expect(result.stderr).not.toContain("sk-not-ours");
  });
});

describe("whoami with an API key", () => {
  test("a namespace-bound key with keys:read and usage:read learns its namespace and scopes from the server", async () => {
    const key = await harness.server.mintKey(harness.account.apiKey, ["keys:read", "usage:read"]);
    const result = await runSwitchyard(["whoami", "--json"], { ...env, SWITCHYARD_API_KEY: key });
    expect(result.exitCode).toBe(0);
    const keyId = `k_${key.slice(4).split(".")[0]}`;
    expect(JSON.parse(result.stdout)).toEqual({ account_id: null, namespace_id: harness.account.namespaceId, scopes: ["keys:read", "usage:read"], api_key_id: keyId });
  });
});
