import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { freshConfigHome, runSwitchyard } from "./run-switchyard";

/**
 * `requests` filters, `usage --daily`, `balance`, `models` and `policies status` as a
 * subprocess against a real server (SWITCHYARD_API_KEY): --json prints exactly what the
 * route answers for the same query; the tables show the figures.
 */
let harness: InferenceHarness;
let env: Record<string, string>;
let key: { id: string; token: string };
let budgetId: string;

const route = async (path: string) => (await harness.server.api("GET", path, { token: harness.account.apiKey })).body;

beforeAll(async () => {
  harness = await startInferenceHarness();
  env = { SWITCHYARD_URL: harness.server.url, SWITCHYARD_API_KEY: harness.account.apiKey, XDG_CONFIG_HOME: freshConfigHome() };
  const minted = await harness.server.api("POST", "/v1/namespaces/me/keys", { token: harness.account.apiKey, body: { display_name: "app", scopes: ["inference:invoke"] } });
  key = { id: minted.body.id, token: minted.body.token };
  const budget = await harness.server.api("POST", "/v1/namespaces/me/policies", { token: harness.account.apiKey, body: { name: "app budget", kind: "budget", spec: { window: "month", limit_micro_usd: 1_000_000 } } });
  budgetId = budget.body.id;
  await harness.server.api("POST", `/v1/namespaces/me/policies/${budgetId}/bind`, { token: harness.account.apiKey, body: { principal_type: "api_key", principal_id: key.id } });
  // Two by the account key, one by the app key (1000 × 0.15 + 200 × 0.6 = 270 µUSD), one by the app key that fails upstream.
  harness.mocks.openai.queueScenarios({ kind: "text" }, { kind: "text" }, { kind: "text", usage: { prompt: 1000, completion: 200 } }, { kind: "error", status: 400 });
  for (const token of [harness.account.apiKey, harness.account.apiKey, key.token, key.token]) {
    await harness.server.api("POST", "/v1/chat/completions", { token, body: { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } });
  }
  await harness.server.server.services.writeBuffer.flush();
  // Budget settlement lands just after the response: wait until the counters have it.
  for (let read = 0; read < 200; read++) {
    const status = await route(`/v1/namespaces/me/policies/${budgetId}/status`);
    if (status.spent_micro_usd === 270 && status.reserved_micro_usd === 0) break;
    await Bun.sleep(25);
  }
});
afterAll(() => harness.close());

describe("requests filters", () => {
  test("--key and --status find the one failed request of a key; --json is the route's body for the same filters", async () => {
    const json = await runSwitchyard(["requests", "--key", key.id, "--status", "failed", "--json"], env);
    expect(json.exitCode).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toEqual(await route(`/v1/namespaces/me/requests?status=failed&api_key_id=${key.id}`));
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ api_key_id: key.id, status: "failed" });

    const table = await runSwitchyard(["requests", "--key", key.id], env);
    expect(table.exitCode).toBe(0);
    expect(table.stdout.trimEnd().split("\n")).toHaveLength(3);
  });

  test("--model, --streamed, --from and --to reach the route as its filters", async () => {
    const json = await runSwitchyard(["requests", "--model", "mock-openai/gpt-4o-mini", "--streamed", "false", "--from", "2020-01-01", "--to", "2100-01-01T00:00:00Z", "--json"], env);
    expect(json.exitCode).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toEqual(await route("/v1/namespaces/me/requests?model_id=mock-openai%2Fgpt-4o-mini&streamed=false&from=2020-01-01T00:00:00Z&to=2100-01-01T00:00:00Z"));
    expect(body.data).toHaveLength(4);
    const none = await runSwitchyard(["requests", "--streamed", "true"], env);
    expect(none.stdout).toBe("No requests.\n");
  });

  test("a malformed filter is bad usage (exit 2); an unknown key simply lists nothing", async () => {
    for (const args of [["--streamed", "yes"], ["--from", "yesterday"]]) {
      const result = await runSwitchyard(["requests", ...args], env);
      expect({ args, exitCode: result.exitCode }).toEqual({ args, exitCode: 2 });
    }
    const unknown = await runSwitchyard(["requests", "--key", "k_nobody"], env);
    expect(unknown.exitCode).toBe(0);
    expect(unknown.stdout).toBe("No requests.\n");
  });
});

describe("requests, page after page", () => {
  test("a full page ends with the command for the next one on stderr; following it walks the whole history once, as the route's next_after does", async () => {
    const everything = (await route("/v1/namespaces/me/requests?limit=100")).data.map((record: any) => record.request_id);
    expect(everything).toHaveLength(4);
    const seen: string[] = [];
    let args = ["requests", "--limit", "1", "--model", "mock-openai/gpt-4o-mini"];
    for (let page = 0; page < 10; page++) {
      const result = await runSwitchyard(args, env);
      expect(result.exitCode).toBe(0);
      const rows = result.stdout.trimEnd().split("\n").slice(1);
      expect(rows).toHaveLength(1);
      seen.push(everything.find((id: string) => rows[0]!.includes(id)));
      const more = /^More: switchyard (.+)$/m.exec(result.stderr);
      if (!more) break;
      // The same filters and limit, and --after the page's last record.
      args = more[1]!.split(" ");
      expect(args.slice(0, 5)).toEqual(["requests", "--limit", "1", "--model", "mock-openai/gpt-4o-mini"]);
      expect(args[5]).toBe("--after");
    }
    expect(seen).toEqual(everything);
  });

  test("--after with --json is the route's body for the same query; the last page says nothing more", async () => {
    const first = await route("/v1/namespaces/me/requests?limit=2");
    expect(first.next_after).toBe(first.data[1].id);
    const json = await runSwitchyard(["requests", "--limit", "2", "--after", first.next_after, "--json"], env);
    expect(json.exitCode).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toEqual(await route(`/v1/namespaces/me/requests?limit=2&after=${first.next_after}`));
    expect(body.next_after).toBeNull();
    const table = await runSwitchyard(["requests", "--limit", "2", "--after", first.next_after], env);
    expect(table.stdout.trimEnd().split("\n")).toHaveLength(3);
    expect(table.stderr).not.toContain("More:");
  });

  test("an --offset past 10,000 is bad usage; an --after that is no record here is the server's 400, said", async () => {
    const deep = await runSwitchyard(["requests", "--offset", "10001"], env);
    expect(deep.exitCode).toBe(2);
    expect(deep.stderr).toContain("--offset");
    const unknown = await runSwitchyard(["requests", "--after", "rq_nobody"], env);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain("after names no record");
    expect(unknown.stdout).toBe("");
  });
});

describe("usage --daily", () => {
  test("--json is the daily route's body; --by key splits today's row by key", async () => {
    const json = await runSwitchyard(["usage", "--daily", "--by", "key", "--from", "2020-01-01", "--to", "2021-01-01", "--json"], env);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await route("/v1/namespaces/me/usage/daily?from=2020-01-01T00:00:00Z&to=2021-01-01T00:00:00Z&group_by=api_key"));

    const table = await runSwitchyard(["usage", "--daily", "--by", "key"], env);
    expect(table.exitCode).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[1]).toMatch(/^DATE\s+KEY\s+REQUESTS\s+IN\s+OUT\s+SPEND$/);
    const today = new Date().toISOString().slice(0, 10);
    const appRow = lines.find((line) => line.includes(key.id))!;
    expect(appRow.startsWith(today)).toBe(true);
    expect(appRow).toMatch(/\s2\s/);
    expect(appRow).toContain("$0.00027");
  });

  test("--by without --daily, or an unknown --by, is bad usage", async () => {
    expect((await runSwitchyard(["usage", "--by", "key"], env)).exitCode).toBe(2);
    const unknown = await runSwitchyard(["usage", "--daily", "--by", "colour"], env);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("--by must be one of model, key, provider");
  });
});

describe("balance, models, policies status", () => {
  test("balance --json is GET /v1/billing/balance; the table shows what is available in USD", async () => {
    const json = await runSwitchyard(["balance", "--json"], env);
    expect(json.exitCode).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toEqual(await route("/v1/billing/balance"));
    const table = await runSwitchyard(["balance"], env);
    expect(table.stdout).toMatch(/^available\s+\$\d+\.\d{2,6}$/m);
  });

  test("models needs no credential: --json is GET /v1/models; the table lists every model with its prices", async () => {
    const anonymous = { SWITCHYARD_URL: harness.server.url, XDG_CONFIG_HOME: freshConfigHome() };
    const json = await runSwitchyard(["models", "--json"], anonymous);
    expect(json.exitCode).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toEqual((await harness.server.api("GET", "/v1/models")).body);
    const table = await runSwitchyard(["models", "--search", "gpt-4o-mini"], anonymous);
    expect(table.exitCode).toBe(0);
    const row = table.stdout.split("\n").find((line) => line.startsWith("mock-openai/gpt-4o-mini"))!;
    // $0.15 in and $0.6 out per million; it served requests, so it has a success rate.
    expect(row).toContain("$0.15");
    expect(row).toContain("$0.6");
    expect(row).toMatch(/\d+\.\d%$/);
  });

  test("policies status <id> --json is the status route's body; the table says what is left of the budget", async () => {
    const json = await runSwitchyard(["policies", "status", budgetId, "--json"], env);
    expect(json.exitCode).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toEqual(await route(`/v1/namespaces/me/policies/${budgetId}/status`));
    expect(body.spent_micro_usd).toBe(270);
    const table = await runSwitchyard(["policies", "status", budgetId], env);
    expect(table.stdout).toBe("budget (month): $0.99973 of $1.00 left ($0.00027 spent, $0.00 held in flight)\n");
    const missing = await runSwitchyard(["policies", "status", "pol_missing"], env);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("not found");
    expect((await runSwitchyard(["policies", "status"], env)).exitCode).toBe(2);
  });
});
