import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { getPage, postForm, signedInUser, submitForm, type ConsoleUser } from "../support/console-session";
import { budgetFloor, maxTokensThatFit } from "../../src/console/budget-floor";
import { formatUsd } from "../../src/console/format";

/**
 * The console's day-one fixes over plain HTTP: a budget no request fits in is shown as
 * blocked (and what the page says still fits does fit), budgets, rate limits and policy
 * presets' budgets changed in place, the keys table with its filter and pages, and the
 * requests page's times, "not charged", "refused" filter, key prefixes and history models.
 */
let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
}, 60_000);
afterAll(() => harness?.close());
beforeEach(async () => {
  await harness.server.server.services.db.sql`delete from auth_throttle`;
});

const server = () => harness.server;
const MODEL = "mock-openai/gpt-4o-mini";
const api = (method: string, path: string, token: string, body?: unknown) => server().api(method, path, { token, body });

async function chat(token: string, model = MODEL, extra: Record<string, unknown> = {}, content = "Hi") {
  return api("POST", "/v1/chat/completions", token, { model, messages: [{ role: "user", content }], ...extra });
}

async function key(user: ConsoleUser, name: string) {
  const made = await api("POST", "/v1/keys", user.apiKey, { display_name: name, scopes: ["inference:invoke", "usage:read"] });
  expect(made.status).toBe(200);
  return { id: made.body.id as string, token: made.body.token as string, prefix: made.body.key_prefix as string };
}

async function historyHolds(user: ConsoleUser, count: number) {
  for (let tries = 0; tries < 100; tries++) {
    const listed = await api("GET", `/v1/namespaces/${user.namespaceId}/requests?limit=100`, user.apiKey);
    if (listed.body.data.length >= count) return listed.body.data as { id: string; status: string; model_id: string | null }[];
    await Bun.sleep(50);
  }
  throw new Error(`the history never held ${count} records`);
}

async function budget(user: ConsoleUser, name: string, limitMicroUsd: number, principal?: { type: string; id: string }) {
  const made = await api("POST", "/v1/budgets", user.apiKey, { name, window: "day", limit_micro_usd: limitMicroUsd });
  expect(made.status).toBe(200);
  const target = principal ?? { type: "namespace", id: user.namespaceId };
  await api("POST", `/v1/policies/${made.body.id}/bind`, user.apiKey, { principal_type: target.type, principal_id: target.id });
  return made.body.id as string;
}

describe("a budget no request fits in", () => {
  test("is shown as blocked with the smallest reservation on both pages, and the max_tokens it names does fit", async () => {
    const floor = budgetFloor(server().server.services.catalog)!;
    expect(floor.microUsd).toBeGreaterThan(10);
    const user = await signedInUser(server(), 50_000_000);
    const app = await key(user, "app");
    // Room for a little, but less than the smallest request's reservation on the cheapest model.
    const limit = floor.microUsd - 1;
    await budget(user, "almost nothing", limit, { type: "api_key", id: app.id });
    const refused = await chat(app.token, floor.modelId);
    expect(refused.status).toBe(402);
    expect(JSON.stringify(refused.body)).toContain("may cost up to");

    for (const path of ["/console/keys", "/console/policies"]) {
      const page = (await getPage(server(), user, path)).text;
      expect(page).toContain('<strong class="blocked-label">Blocked:</strong>');
      expect(page).toContain(`<code>${floor.modelId}</code>`);
      expect(page).toContain("A lower <code>max_tokens</code> lowers the reservation");
      // The bar is red, whatever share of the limit is spent (none here).
      expect(page).toContain('fill="#f6d3d0"');
    }
    const fits = maxTokensThatFit(floor, limit);
    expect(fits).toBeGreaterThan(0);
    expect((await getPage(server(), user, "/console/keys")).text).toContain(`of at most ${fits.toLocaleString("en-US")} still fits`);
    // What the page says fits does: an empty message with that max_tokens is admitted,
    // one more token is not.
    expect((await chat(app.token, floor.modelId, { max_tokens: fits }, "")).status).toBe(200);
  });

  test("a budget with room for the smallest request is not shown as blocked", async () => {
    const floor = budgetFloor(server().server.services.catalog)!;
    const user = await signedInUser(server(), 50_000_000);
    await budget(user, "enough", floor.microUsd * 1000);
    const page = (await getPage(server(), user, "/console/policies")).text;
    expect(page).toContain("left");
    expect(page).not.toContain('<strong class="blocked-label">');
  });
});

describe("budgets and rate limits changed in place", () => {
  test("the budget form stores the new limit through the update service, and a blocked budget raised is admitted", async () => {
    const floor = budgetFloor(server().server.services.catalog)!;
    const user = await signedInUser(server(), 50_000_000);
    const app = await key(user, "app");
    const id = await budget(user, "tight", 1);
    expect((await chat(app.token)).status).toBe(402);
    const page = (await getPage(server(), user, "/console/policies")).text;
    expect(page).toContain(`id="edit-limit-${id}"`);
    expect(page).toContain('value="0.000001"');
    const changed = await submitForm(server(), user, "/console/policies", "/console/policies/edit-budget", { id, window: "month", limit_usd: "2.5" });
    expect(changed.status).toBe(303);
    expect(changed.location).toBe(`/console/policies?ns=${user.namespaceId}&done=budget_changed`);
    const stored = (await api("GET", `/v1/budgets/${id}`, user.apiKey)).body;
    expect(stored).toMatchObject({ window: "month", limit_micro_usd: 2_500_000 });
    expect(floor.microUsd).toBeLessThan(2_500_000);
    expect((await chat(app.token)).status).toBe(200);
    // A refused value is shown with its reason, and nothing changes.
    const refused = await submitForm(server(), user, "/console/policies", "/console/policies/edit-budget", { id, window: "month", limit_usd: "1.2345678" });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('role="alert"');
    expect((await api("GET", `/v1/budgets/${id}`, user.apiKey)).body).toMatchObject({ limit_micro_usd: 2_500_000 });
  });

  test("the rate-limit form changes the caps, and a cap left out is removed", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const app = await key(user, "app");
    const made = await api("POST", "/v1/policies", user.apiKey, { name: "one a minute", kind: "rate_limit", spec: { window_secs: 60, max_requests: 1 } });
    expect(made.status).toBe(200);
    await api("POST", `/v1/policies/${made.body.id}/bind`, user.apiKey, { principal_type: "api_key", principal_id: app.id });
    expect((await chat(app.token)).status).toBe(200);
    expect((await chat(app.token)).status).toBe(429);
    const changed = await submitForm(server(), user, "/console/policies", "/console/policies/edit-rate-limit", { id: made.body.id, window_secs: "60", max_requests: "100", max_tokens: "" });
    expect(changed.status).toBe(303);
    expect((await api("GET", `/v1/policies/${made.body.id}`, user.apiKey)).body.spec).toMatchObject({ window_secs: 60, max_requests: 100 });
    expect((await chat(app.token)).status).toBe(200);
    const none = await submitForm(server(), user, "/console/policies", "/console/policies/edit-rate-limit", { id: made.body.id, window_secs: "60", max_requests: "", max_tokens: "" });
    expect(none.status).toBe(400);
    expect(none.text).toContain("a rate limit without a cap limits nothing");
  });

  test("a policy preset's budget changes in place: amount and window, its other clauses kept, admission follows", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const app = await key(user, "app");
    const rateLimit = { window_secs: 60, max_requests: 100, max_tokens: null };
    const guardrail = { model_allow: null, model_deny: ["openai/gpt-4.1"], max_request_tokens: null, allow_streaming: null, byok: null, content_patterns: null };
    const made = await api("POST", "/v1/policies", user.apiKey, { name: "app preset", kind: "preset", spec: { budget: { window: "day", limit_micro_usd: 1 }, rate_limit: rateLimit, guardrail } });
    expect(made.status).toBe(200);
    const id = made.body.id as string;
    await api("POST", `/v1/policies/${id}/bind`, user.apiKey, { principal_type: "api_key", principal_id: app.id });
    expect((await chat(app.token)).status).toBe(402);

    const page = (await getPage(server(), user, "/console/policies")).text;
    expect(page).toContain('action="/console/policies/edit-preset-budget"');
    expect(page).toContain("<summary>Change the budget</summary>");
    expect(page).toContain(`<input id="edit-preset-limit-${id}" name="limit_usd" type="text" inputmode="decimal" required value="0.000001">`);
    const changed = await submitForm(server(), user, "/console/policies", "/console/policies/edit-preset-budget", { id, window: "month", limit_usd: "2.5" });
    expect(changed.status).toBe(303);
    expect(changed.location).toBe(`/console/policies?ns=${user.namespaceId}&done=preset_budget_changed`);
    const stored = (await api("GET", `/v1/policies/${id}`, user.apiKey)).body;
    expect(stored.kind).toBe("preset");
    expect(stored.spec).toEqual({ budget: { window: "month", limit_micro_usd: 2_500_000 }, rate_limit: rateLimit, guardrail });
    // Admission uses the new amount at once: the request the old one refused is served.
    expect((await chat(app.token)).status).toBe(200);
    const after = (await getPage(server(), user, `/console/policies?done=preset_budget_changed`)).text;
    expect(after).toContain("The preset&#39;s budget changed");
    expect(after).toContain("Spend at most $2.50 in any 30 days");
  });

  test("a refused preset budget is shown in its form, open, with what was typed and why; nothing changes", async () => {
    const user = await signedInUser(server(), 1_000_000);
    const made = await api("POST", "/v1/policies", user.apiKey, { name: "preset", kind: "preset", spec: { budget: { window: "day", limit_micro_usd: 3_000_000 } } });
    const id = made.body.id as string;
    const refusals: Array<[Record<string, string>, string]> = [
      [{ window: "month", limit_usd: "1.2345678" }, "at most 6 decimal places"],
      [{ window: "month", limit_usd: "0" }, "must be more than $0"],
      [{ window: "month", limit_usd: "" }, "The limit"],
      [{ window: "week", limit_usd: "5" }, "window must be one of"],
    ];
    for (const [fields, reason] of refusals) {
      const refused = await submitForm(server(), user, "/console/policies", "/console/policies/edit-preset-budget", { id, ...fields });
      expect({ fields, status: refused.status }).toEqual({ fields, status: 400 });
      expect(refused.text).toContain('role="alert"');
      const item = refused.text.slice(refused.text.indexOf(`id="policy-${id}"`));
      const form = item.slice(0, item.indexOf("</details>"));
      expect(form).toContain('<details class="edit" open>');
      expect(form).toContain(`value="${fields.limit_usd}" aria-invalid="true" aria-describedby="edit-preset-error-${id}"`);
      expect(form).toContain(`<p class="error" id="edit-preset-error-${id}">`);
      expect(form).toContain(reason);
    }
    expect((await api("GET", `/v1/policies/${id}`, user.apiKey)).body.spec.budget).toEqual({ window: "day", limit_micro_usd: 3_000_000 });
    // Only the refused form is open again: a plain page load has every form folded.
    expect((await getPage(server(), user, "/console/policies")).text).not.toContain("<details class=\"edit\" open>");
  });

  test("a preset without a budget gets one from the same form", async () => {
    const user = await signedInUser(server(), 1_000_000);
    const made = await api("POST", "/v1/policies", user.apiKey, { name: "rate only", kind: "preset", spec: { rate_limit: { window_secs: 60, max_requests: 5 } } });
    const id = made.body.id as string;
    const page = (await getPage(server(), user, "/console/policies")).text;
    expect(page).toContain("<summary>Add a budget</summary>");
    expect(page).toContain(`<input id="edit-preset-limit-${id}" name="limit_usd" type="text" inputmode="decimal" required value="">`);
    expect((await submitForm(server(), user, "/console/policies", "/console/policies/edit-preset-budget", { id, window: "total", limit_usd: "7" })).status).toBe(303);
    const spec = (await api("GET", `/v1/policies/${id}`, user.apiKey)).body.spec;
    expect(spec.budget).toEqual({ window: "total", limit_micro_usd: 7_000_000 });
    expect(spec.rate_limit).toMatchObject({ window_secs: 60, max_requests: 5 });
    expect(spec.guardrail).toBeNull();
  });

  test("another account's preset, or a plain budget, in the preset form is the 404 page of a missing one, and stays as it was", async () => {
    const alice = await signedInUser(server(), 1_000_000);
    const bob = await signedInUser(server(), 1_000_000);
    await api("POST", "/v1/policies", alice.apiKey, { name: "alice's preset", kind: "preset", spec: { budget: { window: "day", limit_micro_usd: 1_000_000 } } });
    const bobsPreset = (await api("POST", "/v1/policies", bob.apiKey, { name: "bob's preset", kind: "preset", spec: { budget: { window: "day", limit_micro_usd: 1_000_000 } } })).body.id as string;
    const missing = await submitForm(server(), alice, "/console/policies", "/console/policies/edit-preset-budget", { id: "pol_doesnotexist0000", window: "day", limit_usd: "9" });
    const foreign = await submitForm(server(), alice, "/console/policies", "/console/policies/edit-preset-budget", { id: bobsPreset, window: "day", limit_usd: "9" });
    expect(foreign.status).toBe(404);
    expect(foreign.text.replace(bobsPreset, "ID")).toBe(missing.text.replace("pol_doesnotexist0000", "ID"));
    const ownBudget = await budget(alice, "alice's budget", 1_000_000);
    expect((await submitForm(server(), alice, "/console/policies", "/console/policies/edit-preset-budget", { id: ownBudget, window: "day", limit_usd: "9" })).status).toBe(404);
    expect((await api("GET", `/v1/policies/${bobsPreset}`, bob.apiKey)).body.spec.budget).toEqual({ window: "day", limit_micro_usd: 1_000_000 });
    expect((await api("GET", `/v1/budgets/${ownBudget}`, alice.apiKey)).body).toMatchObject({ limit_micro_usd: 1_000_000 });
  });

  test("another account's budget or rate limit is the 404 page of a missing one, and stays as it was", async () => {
    const alice = await signedInUser(server(), 1_000_000);
    const bob = await signedInUser(server(), 1_000_000);
    await budget(alice, "alice's", 1_000_000);
    await api("POST", "/v1/policies", alice.apiKey, { name: "alice's rate", kind: "rate_limit", spec: { window_secs: 60, max_requests: 5 } });
    const bobsBudget = await budget(bob, "bob's", 1_000_000);
    const bobsRate = (await api("POST", "/v1/policies", bob.apiKey, { name: "bob's rate", kind: "rate_limit", spec: { window_secs: 60, max_requests: 5 } })).body.id as string;
    const missing = await submitForm(server(), alice, "/console/policies", "/console/policies/edit-budget", { id: "pol_doesnotexist0000", window: "day", limit_usd: "9" });
    const foreign = await submitForm(server(), alice, "/console/policies", "/console/policies/edit-budget", { id: bobsBudget, window: "day", limit_usd: "9" });
    expect(foreign.status).toBe(404);
    expect(foreign.status).toBe(missing.status);
    expect(foreign.text.replace(bobsBudget, "ID")).toBe(missing.text.replace("pol_doesnotexist0000", "ID"));
    const foreignRate = await submitForm(server(), alice, "/console/policies", "/console/policies/edit-rate-limit", { id: bobsRate, window_secs: "1", max_requests: "1" });
    expect(foreignRate.status).toBe(404);
    // A budget's id in the rate-limit form is a 404 too: the form is typed to its kind.
    const ownBudget = (await api("GET", "/v1/budgets", alice.apiKey)).body.data[0].id as string;
    expect((await submitForm(server(), alice, "/console/policies", "/console/policies/edit-rate-limit", { id: ownBudget, window_secs: "1", max_requests: "1" })).status).toBe(404);
    expect((await api("GET", `/v1/budgets/${bobsBudget}`, bob.apiKey)).body).toMatchObject({ limit_micro_usd: 1_000_000 });
    expect((await api("GET", `/v1/policies/${bobsRate}`, bob.apiKey)).body.spec).toMatchObject({ max_requests: 5 });
  });
});

describe("the keys page", () => {
  test("is a table with prefix, status, scopes, spend this month and limits; it filters by name and pages by 50", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const spender = await key(user, "spender");
    await chat(spender.token);
    await historyHolds(user, 1);
    const spend = (await api("GET", `/v1/namespaces/${user.namespaceId}/requests?limit=1`, user.apiKey)).body.data[0].final_charge_micro_usd as number;
    expect(spend).toBeGreaterThan(0);
    // 120 more keys: the page must hold hundreds.
    for (let index = 0; index < 120; index++) await key(user, `worker ${String(index).padStart(3, "0")}`);
    // The namespace's table only: the account-wide keys have a table of their own below it.
    const namespaceTable = (page: string) => page.slice(page.indexOf('id="keys-heading"'), page.indexOf('id="account-keys-heading"'));
    const first = namespaceTable((await getPage(server(), user, "/console/keys")).text);
    expect(first).toContain('<table class="dense keys" id="keys-table">');
    for (const column of ["Name", "Prefix", "Status", "Scopes", "Created", "Last used", "Spend this month", "Limits"]) expect(first).toContain(`<th scope="col"${column === "Spend this month" ? ' class="num"' : ""}>${column}</th>`);
    expect(first).toContain("121 keys, newest first.");
    expect(first.match(/<tr><th scope="row"/g)!.length).toBe(50);
    expect(first).toContain("Page 1 of 3");
    expect(first).toContain(`href="/console/keys?ns=${user.namespaceId}&amp;page=2" rel="next"`);
    const last = namespaceTable((await getPage(server(), user, "/console/keys?page=3")).text);
    expect(last.match(/<tr><th scope="row"/g)!.length).toBe(21);
    expect(last).toContain(`<code>${spender.prefix}</code>`);
    expect(last).toContain(`<td data-label="Spend this month" class="num">${formatUsd(spend)}</td>`);
    const filtered = namespaceTable((await getPage(server(), user, "/console/keys?q=SPEND")).text);
    expect(filtered).toContain("1 key of 121 match.");
    expect(filtered.match(/<tr><th scope="row"/g)!.length).toBe(1);
    expect(filtered).toContain(">spender</th>");
    // A page past the end shows the last one; a page that is no number, the first.
    expect((await getPage(server(), user, "/console/keys?page=99")).text).toContain("Page 3 of 3");
    expect((await getPage(server(), user, "/console/keys?page=x")).text).toContain("Page 1 of 3");
  }, 60_000);

  test("with 50 keys the page stays short: one table row a key, not a card", async () => {
    const user = await signedInUser(server(), 1_000_000);
    for (let index = 0; index < 50; index++) await key(user, `k${index}`);
    const page = (await getPage(server(), user, "/console/keys")).text;
    expect(page).not.toContain('<ul class="items">');
    expect(page.length).toBeLessThan(200_000);
  }, 60_000);
});

describe("the requests page", () => {
  test("times are to the second, a refused request is not charged and has its own filter, same-named keys read apart, history models are choices", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const first = await key(user, "ci");
    const second = await key(user, "ci");
    await budget(user, "none", 1, { type: "api_key", id: second.id });
    expect((await chat(first.token)).status).toBe(200);
    expect((await chat(second.token)).status).toBe(402);
    // A model the catalog does not have: refused, but still a model of the history.
    expect((await chat(first.token, "mock-openai/no-such-model")).status).not.toBe(200);
    await historyHolds(user, 3);
    const page = (await getPage(server(), user, "/console/requests")).text;
    expect(page).toMatch(/<td data-label="Time" class="time"><a [^>]*>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC<\/a><\/td>/);
    expect(page).toContain(`<option value="${first.id}">ci (${first.prefix}…)</option>`);
    expect(page).toContain(`<option value="${second.id}">ci (${second.prefix}…)</option>`);
    expect(page).toContain('<option value="refused">');
    expect(page).toContain('<option value="mock-openai/no-such-model">');
    // The refused rows say "not charged" where they said "Wallet"; the served one says Wallet.
    expect(page.match(/<td data-label="Paid by">not charged<\/td>/g)!.length).toBe(2);
    expect(page.match(/<td data-label="Paid by">Wallet<\/td>/g)!.length).toBe(1);
    const refused = (await getPage(server(), user, "/console/requests?status=refused")).text;
    expect(refused.match(/<tr class="failed">/g)!.length).toBe(2);
    expect((await api("GET", `/v1/namespaces/${user.namespaceId}/requests?status=refused`, user.apiKey)).body.data).toHaveLength(2);
    const byModel = (await getPage(server(), user, "/console/requests?model_id=mock-openai%2Fno-such-model")).text;
    expect(byModel.match(/<tr class="failed">/g)!.length).toBe(1);
  });
});

describe("namespaces from the console", () => {
  test("the keys page creates a namespace and leads to its keys; a taken name is a 409 with the form kept; a forged form changes nothing", async () => {
    const user = await signedInUser(server(), 1_000_000);
    const created = await submitForm(server(), user, "/console/keys", "/console/namespaces", { name: "staging" });
    expect(created.status).toBe(303);
    const listed = (await api("GET", "/v1/namespaces", user.apiKey)).body.data as { id: string; name: string }[];
    const staging = listed.find((namespace) => namespace.name === "staging")!;
    expect(staging).toBeDefined();
    expect(created.location).toBe(`/console/keys?ns=${staging.id}&done=namespace`);
    const page = (await getPage(server(), user, created.location!)).text;
    expect(page).toContain("Namespace created: this is its page of keys.");
    expect(page).toContain("Keys of staging");
    const again = await submitForm(server(), user, "/console/keys", "/console/namespaces", { name: "staging" });
    expect(again.status).toBe(409);
    expect(again.text).toContain("a namespace named &quot;staging&quot; already exists");
    expect(again.text).toContain('id="namespace-name" name="name" type="text" maxlength="100" required aria-describedby="namespace-hint" value="staging"');
    const forged = await postForm(server(), user, "/console/namespaces", { csrf_token: "forged", ns: user.namespaceId, name: "forged" });
    expect(forged.status).toBe(403);
    expect(((await api("GET", "/v1/namespaces", user.apiKey)).body.data as { name: string }[]).map((namespace) => namespace.name)).not.toContain("forged");
  });
});
