import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { freshConfigHome, runSwitchyard } from "./run-switchyard";

let server: TestServer;
let account: TestAccount;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
  env = { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: account.apiKey, XDG_CONFIG_HOME: freshConfigHome() };
  const create = async (path: string, body: unknown) => expect((await server.api("POST", `/v1/namespaces/me/${path}`, { token: account.apiKey, body })).status).toBe(200);
  await create("policies", { name: "daily-cap", kind: "budget", spec: { window: "day", limit_micro_usd: 5_250_001 } });
  await create("policies", { name: "burst", kind: "rate_limit", spec: { window_secs: 60, max_requests: 100, max_tokens: 20_000 } });
  await create("presets", { name: "locked-down", guardrail: { model_deny: ["openai/gpt-4o"], allow_streaming: false }, budget: { window: "month", limit_micro_usd: 1_000_000 } });
});
afterAll(() => server.close());

describe("policies and presets", () => {
  test("policies list --json prints the route's body; the table states each rule with money in USD", async () => {
    const json = await runSwitchyard(["policies", "list", "--json"], env);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await server.api("GET", "/v1/namespaces/me/policies", { token: account.apiKey })).body);

    const table = await runSwitchyard(["policies", "list"], env);
    expect(table.exitCode).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+KIND\s+STATE\s+RULE$/);
    expect(lines.find((line) => line.includes("daily-cap"))).toMatch(/budget\s+enabled\s+\$5\.250001 per 24 h$/);
    expect(lines.find((line) => line.includes("burst"))).toMatch(/rate_limit\s+enabled\s+100 requests and 20,000 tokens per 60 s$/);
    expect(lines.find((line) => line.includes("locked-down"))).toMatch(/preset\s+enabled\s+budget \$1\.00 per 30 days \| guardrail: deny openai\/gpt-4o; no streaming$/);
  });

  test("policies list --kind filters at the server", async () => {
    const json = await runSwitchyard(["policies", "list", "--kind", "budget", "--json"], env);
    expect(json.exitCode).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body.data.map((policy: { name: string }) => policy.name)).toEqual(["daily-cap"]);
  });

  test("presets list shows the policy presets (not routing presets), --json the route's body", async () => {
    const json = await runSwitchyard(["presets", "list", "--json"], env);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await server.api("GET", "/v1/namespaces/me/presets", { token: account.apiKey })).body);
    const table = await runSwitchyard(["presets", "list"], env);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+STATE\s+BUDGET\s+RATE LIMIT\s+GUARDRAIL\n\S+\s+locked-down\s+enabled\s+\$1\.00 per 30 days\s+-\s+deny openai\/gpt-4o; no streaming\n$/);
  });

  test("a disabled policy shows as disabled", async () => {
    const policies = (await server.api("GET", "/v1/namespaces/me/policies?kind=rate_limit", { token: account.apiKey })).body.data;
    expect((await server.api("POST", `/v1/namespaces/me/policies/${policies[0].id}/disable`, { token: account.apiKey })).status).toBe(200);
    const table = await runSwitchyard(["policies", "list", "--kind", "rate_limit"], env);
    expect(table.stdout).toMatch(/burst\s+rate_limit\s+disabled \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z/);
  });

  test("an empty namespace says so", async () => {
    const other = await server.createAccount();
    const result = await runSwitchyard(["presets", "list"], { ...env, SWITCHYARD_API_KEY: other.apiKey });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("No presets.\n");
  });
});
