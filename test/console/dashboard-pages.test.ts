import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import sodium from "libsodium-wrappers";
import { MOCK_KEY, startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { getPage, postForm, signedInUser, submitForm, type ConsoleUser } from "../support/console-session";
import { createTestDatabase } from "../support/test-database";
import { spawnServer } from "../support/spawn-server";
import { csvCell, requestsCsvResponse } from "../../src/console/requests-csv";
import { stackedSeries } from "../../src/console/overview-series";
import { requestBreakdown } from "../../src/console/request-breakdown";
import type { RequestRecordEnvelope } from "../../src/management/usage/usage-service";

let harness: InferenceHarness;
beforeAll(async () => {
  [harness] = await Promise.all([startInferenceHarness(), sodium.ready]);
}, 60_000);
afterAll(() => harness?.close());
beforeEach(async () => {
  await harness.server.server.services.db.sql`delete from auth_throttle`;
});

const server = () => harness.server;
const MODEL = "mock-openai/gpt-4o-mini";

async function chat(token: string, model = MODEL) {
  return server().api("POST", "/v1/chat/completions", { token, body: { model, messages: [{ role: "user", content: "Hi" }] } });
}

/** A key of the user's namespace (inference and reading), its id and token. */
async function key(user: ConsoleUser, name: string) {
  const made = await server().api("POST", "/v1/keys", { token: user.apiKey, body: { display_name: name, scopes: ["inference:invoke", "usage:read"] } });
  expect(made.status).toBe(200);
  return { id: made.body.id as string, token: made.body.token as string };
}

/** Waits until the namespace's history holds `count` records (they are written in batches). */
async function historyHolds(user: ConsoleUser, count: number) {
  for (let tries = 0; tries < 100; tries++) {
    const listed = await server().api("GET", `/v1/namespaces/${user.namespaceId}/requests?limit=100`, { token: user.apiKey });
    if (listed.body.data.length >= count) return listed.body.data;
    await Bun.sleep(50);
  }
  throw new Error(`the history never held ${count} records`);
}

describe("arrival", () => {
  test("/ sends a browser to the console and still answers an API client with the JSON 404", async () => {
    const browser = await fetch(`${server().url}/`, { headers: { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8" }, redirect: "manual" });
    expect(browser.status).toBe(303);
    expect(browser.headers.get("location")).toBe("/console");
    expect(browser.headers.get("content-security-policy")).toContain("default-src 'none'");
    for (const accept of ["application/json", "*/*", undefined]) {
      const client = await fetch(`${server().url}/`, { headers: accept ? { accept } : {}, redirect: "manual" });
      expect(client.status).toBe(404);
      expect(client.headers.get("content-type")).toContain("application/json");
      expect(await client.json()).toEqual({ error: "not_found", error_description: "route not found" });
    }
  });

  test("the sign-in page says how an operator creates an account", async () => {
    const page = await (await fetch(`${server().url}/console`)).text();
    expect(page).toContain("npm run admin -- create-account --email");
  });

  test("the startup log names the console's address", async () => {
    const database = await createTestDatabase();
    try {
      const spawned = await spawnServer({ DATABASE_URL: database.url, PUBLIC_URL: "https://gateway.example" });
      spawned.process.kill();
      await spawned.exited;
      const line = spawned.output().split("\n").find((entry) => entry.includes("https://gateway.example/console"));
      expect(line).toBeDefined();
    } finally {
      await database.drop();
    }
  }, 60_000);

  test("an account without requests gets the three commands of a first request, with this server's address", async () => {
    const user = await signedInUser(server(), 1_000_000);
    const page = await getPage(server(), user, "/console");
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="first-run"');
    const base = server().server.services.config.publicUrl;
    expect(page.text).toContain(`curl -s ${base}/v1/chat/completions`);
    expect(page.text).toContain(`new OpenAI({ baseURL: "${base}/v1"`);
    expect(page.text).toContain("keys create --name my-app");
    // Nothing to chart yet: the panel stands in for the charts.
    expect(page.text).not.toContain('id="spend-chart"');
    await chat(user.apiKey);
    await historyHolds(user, 1);
    const after = (await getPage(server(), user, "/console")).text;
    expect(after).not.toContain('id="first-run"');
    expect(after).toContain('id="spend-chart"');
  });
});

describe("the overview", () => {
  test("charts are SVG with a title, a description and a table; split by key they name the keys, markup in a name stays text", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const alpha = await key(user, "alpha <script>alert(1)</script>");
    const beta = await key(user, "beta");
    await chat(alpha.token);
    await chat(beta.token);
    await chat(beta.token);
    await historyHolds(user, 3);
    const byKey = await getPage(server(), user, "/console?days=30&by=key");
    expect(byKey.status).toBe(200);
    for (const id of ["spend-chart", "requests-chart", "tokens-chart"]) {
      expect(byKey.text).toContain(`<title id="${id}-title">`);
      expect(byKey.text).toContain(`<desc id="${id}-desc">`);
    }
    expect(byKey.text).toContain("alpha &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(byKey.text).not.toContain("<script>alert(1)");
    // The requests chart's table: today, alpha 1 and beta 2 (beta first: it has more).
    const requestsTable = byKey.text.slice(byKey.text.indexOf('id="requests-chart"'));
    expect(requestsTable).toMatch(/<th scope="col">beta<\/th><th scope="col">alpha &lt;script&gt;alert\(1\)&lt;\/script&gt;<\/th>/);
    expect(requestsTable).toMatch(/<th scope="row">\d{4}-\d{2}-\d{2}<\/th><td>2<\/td><td>1<\/td>/);
    const byModel = await getPage(server(), user, "/console?days=7&by=model");
    expect(byModel.text).toContain(`<th scope="col">${MODEL}</th>`);
    expect(byModel.text).toContain("last 7 days");
    expect(byModel.text).toMatch(/<a href="[^"]*by=model"[^>]*aria-current="true">Model<\/a>/);
    // Anything else in the query is the default, never an error.
    expect((await getPage(server(), user, "/console?days=abc&by=%3Cb%3E")).status).toBe(200);
  });

  test("refusals are counted by kind, BYOK use is apart from wallet spend, and a key's failures link to its failed requests", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const capped = await key(user, "capped");
    const budget = await server().api("POST", "/v1/budgets", { token: user.apiKey, body: { name: "tiny", window: "day", limit_micro_usd: 1 } });
    await server().api("POST", `/v1/policies/${budget.body.id}/bind`, { token: user.apiKey, body: { principal_type: "api_key", principal_id: capped.id } });
    expect((await chat(capped.token)).status).toBe(402);
    expect((await chat(user.apiKey)).status).toBe(200);
    await historyHolds(user, 2);
    const page = (await getPage(server(), user, "/console")).text;
    expect(page).toMatch(/<td data-label="Kind">Refused: budget<\/td><td data-label="Requests" class="num">1<\/td>/);
    expect(page).toContain(`/console/requests?ns=${user.namespaceId}&amp;api_key_id=${capped.id}&amp;status=failed`);
    expect(page).toMatch(/id="byok-usage">0 requests/);
  });
});

test("the overview shows requests served with the account's own provider key apart from wallet spend", async () => {
  const user = await signedInUser(server(), 50_000_000);
  const { kek_id, public_key } = (await server().api("GET", "/v1/byok/encryption-pubkey")).body;
  // The mock provider's own key, stored as the account's: its requests are BYOK-funded.
  const box = sodium.crypto_box_seal(sodium.from_string(MOCK_KEY), sodium.from_base64(public_key, sodium.base64_variants.ORIGINAL));
  const stored = await server().api("POST", "/v1/byok/keys", { token: user.apiKey, body: { provider_name: "mock-openai", kek_id, ciphertext_b64: sodium.to_base64(box, sodium.base64_variants.ORIGINAL), key_prefix: "moc" } });
  expect(stored.status).toBe(200);
  for (let i = 0; i < 2; i++) expect((await chat(user.apiKey)).status).toBe(200);
  expect((await chat(user.apiKey, "mock-anthropic/claude-sonnet-4-5")).status).toBe(200);
  const records = await historyHolds(user, 3);
  const byok = records.filter((record: { funding_source: string }) => record.funding_source === "byok");
  expect(byok.length).toBe(2);
  const tokens = byok.reduce((sum: number, record: { prompt_tokens: number; completion_tokens: number }) => sum + record.prompt_tokens + record.completion_tokens, 0);
  const wallet = records.find((record: { funding_source: string }) => record.funding_source === "cloud_credit");
  const dollars = (micro: number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(micro / 1e6);
  const page = (await getPage(server(), user, "/console")).text;
  expect(page).toContain(`id="byok-usage">2 requests, ${tokens} tokens, not charged</dd>`);
  expect(page).toContain(`<dt>Wallet</dt><dd>1 request, ${dollars(wallet.final_charge_micro_usd)}</dd>`);
});

describe("the requests page", () => {
  test("filters live in the URL and narrow the table; a malformed one is a 400 page naming it", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const one = await key(user, "one");
    await chat(one.token);
    await chat(user.apiKey);
    await chat(user.apiKey, "mock-openai/no-such-model");
    await historyHolds(user, 3);
    const all = await getPage(server(), user, "/console/requests");
    expect(all.text.match(/<tr(?: class="failed")?>\n<td data-label="Time" class="time">/g)?.length).toBe(3);
    const ofKey = await getPage(server(), user, `/console/requests?api_key_id=${one.id}`);
    expect(ofKey.text.match(/<td data-label="Key">one<\/td>/g)?.length).toBe(1);
    expect(ofKey.text.match(/<td data-label="Time" class="time">/g)?.length).toBe(1);
    // The key is named with its prefix, so two keys named alike read apart.
    expect(ofKey.text).toMatch(new RegExp(`<option value="${one.id}" selected>one \\(brk_[a-z0-9]+…\\)</option>`));
    const today = new Date().toISOString().slice(0, 10);
    const dated = await getPage(server(), user, `/console/requests?from=${today}&to=${today}&streamed=false`);
    expect(dated.text.match(/<td data-label="Time" class="time">/g)?.length).toBe(3);
    const before = await getPage(server(), user, `/console/requests?to=2020-01-01`);
    expect(before.text).toContain("No request matches these filters.");
    for (const [query, words] of [
      ["from=2026-02-30", "From must be a date"],
      ["streamed=maybe", "Streamed must be true or false"],
      ["from=2026-02-02&to=2026-02-01", "From must not be after To"],
    ] as const) {
      const refused = await getPage(server(), user, `/console/requests?${query}`);
      expect(refused.status).toBe(400);
      expect(refused.text).toContain(words);
    }
  });

  test("pages go by the last request shown: Older requests follows next_after through the whole filtered history once, with plain links; Newest leads back", async () => {
    const user = await signedInUser(server());
    const sql = server().server.services.db.sql;
    // 13 records, a microsecond apart, every third by one key (the filter the pages keep).
    await sql`insert into requests (id, request_id, account_id, namespace_id, api_key_id, status, status_code, billing_status, streamed, usage_evidence, created_at, completed_at)
      select 'rq_console_' || lpad(g::text, 2, '0'), 'console', ${user.accountId}, ${user.namespaceId}, case when g % 3 = 0 then 'k_third' else null end,
             'succeeded', 200, 'computed', false, '{}', now() - interval '1 hour' + make_interval(secs => g * 0.000001), now()
        from generate_series(1, 13) g`;
    const shown = (text: string) => [...text.matchAll(/href="\/console\/requests\/(rq_console_\d\d)\?/g)].map((match) => match[1]!);
    const olderLink = (text: string) => /<a href="([^"]+)" rel="next">Older requests<\/a>/.exec(text)?.[1]?.replaceAll("&amp;", "&");
    const walk = async (start: string) => {
      const pages: string[][] = [];
      let path: string | undefined = start;
      while (path !== undefined && pages.length < 20) {
        const page = await getPage(server(), user, path);
        expect(page.status).toBe(200);
        pages.push(shown(page.text));
        if (pages.length > 1) expect(page.text).toContain(`rel="first">Newest requests</a>`);
        path = olderLink(page.text);
        if (path !== undefined) {
          const link = new URL(path, server().url);
          // The position of the last request shown, not an offset; the filters and the page size ride along.
          expect(link.searchParams.get("after")).toBe(pages.at(-1)!.at(-1)!);
          expect(link.searchParams.has("offset")).toBe(false);
        }
      }
      return pages;
    };
    const newestFirst = Array.from({ length: 13 }, (_, i) => `rq_console_${String(13 - i).padStart(2, "0")}`);
    const all = await walk(`/console/requests?ns=${user.namespaceId}&limit=5`);
    expect(all).toEqual([newestFirst.slice(0, 5), newestFirst.slice(5, 10), newestFirst.slice(10)]);
    const first = await getPage(server(), user, `/console/requests?ns=${user.namespaceId}&limit=5`);
    expect(first.text).not.toContain("Newest requests");
    const ofKey = await walk(`/console/requests?ns=${user.namespaceId}&limit=2&api_key_id=k_third`);
    expect(ofKey).toEqual([["rq_console_12", "rq_console_09"], ["rq_console_06", "rq_console_03"]]);
    // A page that ends exactly at the oldest request offers no empty page after it.
    const exact = await getPage(server(), user, `/console/requests?ns=${user.namespaceId}&limit=13`);
    expect(olderLink(exact.text)).toBeUndefined();
  });

  test("a page after a request this namespace does not have is one 400 page, the same for a missing one and another account's", async () => {
    const user = await signedInUser(server(), 50_000_000);
    await chat(user.apiKey);
    const [record] = await historyHolds(user, 1);
    const own = await getPage(server(), user, `/console/requests?after=${record.id}`);
    expect(own.status).toBe(200);
    expect(own.text).toContain("No more requests.");
    const stranger = await signedInUser(server());
    const theirs = await getPage(server(), stranger, `/console/requests?after=${record.id}`);
    const missing = await getPage(server(), stranger, "/console/requests?after=rq_does_not_exist");
    expect(theirs.status).toBe(400);
    expect(theirs.text).toBe(missing.text);
    expect(missing.text).toContain("Start again from the newest requests");
    for (const query of ["after=", "after=%00", "after=a%20b", `after=${"x".repeat(200)}`, "offset=10001", "offset=-1", "limit=abc"]) {
      const refused = await getPage(server(), stranger, `/console/requests?${query}`);
      expect({ query, status: refused.status }).toEqual({ query, status: 400 });
    }
  });

  test("a request's detail shows its evidence and the refusing policy; another account's request is the 404 of a missing one", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const budget = await server().api("POST", "/v1/budgets", { token: user.apiKey, body: { name: "none left", window: "day", limit_micro_usd: 1 } });
    await server().api("POST", `/v1/policies/${budget.body.id}/bind`, { token: user.apiKey, body: { principal_type: "namespace", principal_id: user.namespaceId } });
    expect((await chat(user.apiKey)).status).toBe(402);
    const [record] = await historyHolds(user, 1);
    const detail = await getPage(server(), user, `/console/requests/${record.id}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain("Refused by a policy");
    expect(detail.text).toContain(budget.body.id);
    expect(detail.text).toContain("Usage evidence");
    // A served request's page: its figures as the history lists them.
    const paying = await signedInUser(server(), 50_000_000);
    expect((await chat(paying.apiKey)).status).toBe(200);
    const [served] = await historyHolds(paying, 1);
    const dollars = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(served.final_charge_micro_usd / 1e6);
    const servedPage = (await getPage(server(), paying, `/console/requests/${served.id}`)).text;
    expect(servedPage).toContain(`<dt>Cost</dt><dd>${dollars} <span class="hint">(computed)</span></dd>`);
    expect(servedPage).toContain(`<dt>Tokens in / out</dt><dd>${served.prompt_tokens} / ${served.completion_tokens}</dd>`);
    expect(servedPage).toContain(`<dt>Provider</dt><dd>${served.provider_id}</dd>`);
    expect(servedPage).toContain(`Source: <strong>${served.usage_evidence.source}</strong>`);
    expect(servedPage).not.toContain('id="refusal"');
    // Its one attempt, numbered as the record numbers it, with the provider's status and the tokens it reported.
    expect(servedPage).toContain(`<td data-label="Attempt">1</td><td data-label="Provider" class="wrap">${served.provider_id} `);
    expect(servedPage).toContain(`<td data-label="Upstream status" class="num">200</td>`);
    expect(servedPage).toContain(`<td data-label="Tokens in / out" class="num">${served.prompt_tokens} / ${served.completion_tokens}</td>`);
    const stranger = await signedInUser(server());
    const theirs = await getPage(server(), stranger, `/console/requests/${record.id}`);
    const missing = await getPage(server(), stranger, `/console/requests/req_does_not_exist`);
    expect(theirs.status).toBe(404);
    expect(theirs.text).toBe(missing.text);
  });

  test("the CSV export streams the filtered set with spreadsheet formulas defused", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const formula = await key(user, "=HYPERLINK(\"https://evil.example\",\"x\")");
    await chat(formula.token);
    await chat(user.apiKey);
    await historyHolds(user, 2);
    const response = await fetch(`${server().url}/console/requests.csv?ns=${user.namespaceId}&api_key_id=${formula.id}`, { headers: { cookie: user.cookie } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toContain("attachment");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    const lines = (await response.text()).trimEnd().split("\r\n");
    expect(lines[0]!).toStartWith("created_at,request_id,key,");
    expect(lines.length).toBe(2);
    expect(lines[1]).toContain(`"'=HYPERLINK(""https://evil.example"",""x"")"`);
  });

  test("hostile filters, request ids and overview choices are 4xx pages or empty results, never a 500, and never markup", async () => {
    const user = await signedInUser(server(), 1_000_000);
    const hostile = ["%00", "%3Cscript%3Ealert(1)%3C%2Fscript%3E", "%ED%A0%80", "x".repeat(5_000), "..%2F..%2Fetc", "%27%3B%20drop%20table%20requests%3B--"];
    for (const value of hostile) {
      for (const path of [
        `/console/requests?status=${value}`,
        `/console/requests?model_id=${value}`,
        `/console/requests?api_key_id=${value}`,
        `/console/requests?from=${value}`,
        `/console/requests.csv?api_key_id=${value}`,
        `/console/requests/${value}`,
        `/console?days=${value}&by=${value}`,
      ]) {
        const page = await getPage(server(), user, path);
        expect({ path: path.slice(0, 60), ok: page.status < 500 }).toEqual({ path: path.slice(0, 60), ok: true });
        expect(page.text).not.toContain("<script>alert(1)");
      }
    }
  });

  test("a CSV cell that a spreadsheet would run is prefixed, and one with a comma or quote is quoted", () => {
    for (const start of ["=", "+", "-", "@", "\t", "\r"]) expect(csvCell(`${start}1+1`).includes(`'${start}1+1`)).toBe(true);
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
    expect(csvCell(-5)).toBe("-5");
    expect(csvCell(null)).toBe("");
  });

  test("the CSV body asks for a page of rows only when the reader has taken the previous one", async () => {
    const pulled: number[] = [];
    const row = (index: number) => ({ created_at: "2026-01-01T00:00:00Z", request_id: `req_${index}`, status: "succeeded", status_code: 200 }) as unknown as RequestRecordEnvelope;
    async function* pages() {
      for (let page = 0; page < 10; page++) {
        pulled.push(page);
        yield Array.from({ length: 100 }, (_, i) => row(page * 100 + i));
      }
    }
    const response = requestsCsvResponse(pages(), new Map(), "x.csv");
    const reader = response.body!.getReader();
    await reader.read(); // the header line
    await reader.read(); // the first page
    expect(pulled).toEqual([0]);
    let lines = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      lines += new TextDecoder().decode(value).split("\r\n").length - 1;
    }
    expect(lines).toBe(900);
    expect(pulled).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test("a CSV export the client abandons stops reading the history", async () => {
    let pulled = 0;
    let finished = false;
    async function* pages() {
      try {
        for (;;) {
          pulled++;
          yield [{ created_at: "2026-01-01T00:00:00Z", request_id: "req", status: "succeeded", status_code: 200 } as unknown as RequestRecordEnvelope];
        }
      } finally {
        finished = true;
      }
    }
    const reader = requestsCsvResponse(pages(), new Map(), "x.csv").body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    expect(finished).toBe(true);
    expect(pulled).toBe(1);
  });
});

describe("limits, visible", () => {
  test("the policies page shows a rate limit's window use and a budget's spend; the keys page shows each key's own figures", async () => {
    const user = await signedInUser(server(), 50_000_000);
    const one = await key(user, "one");
    const other = await key(user, "other");
    const rate = await server().api("POST", "/v1/policies", { token: user.apiKey, body: { name: "five a minute", kind: "rate_limit", spec: { window_secs: 60, max_requests: 5 } } });
    const budget = await server().api("POST", "/v1/budgets", { token: user.apiKey, body: { name: "ten dollars", window: "month", limit_micro_usd: 10_000_000 } });
    for (const policy of [rate.body.id, budget.body.id]) {
      for (const principal of [one.id, other.id]) {
        expect((await server().api("POST", `/v1/policies/${policy}/bind`, { token: user.apiKey, body: { principal_type: "api_key", principal_id: principal } })).status).toBe(200);
      }
    }
    for (let i = 0; i < 2; i++) expect((await chat(one.token)).status).toBe(200);
    expect((await chat(other.token)).status).toBe(200);
    await historyHolds(user, 3);
    // Budget spend is settled after the response: wait until all three requests are counted and nothing is reserved.
    let status = (await server().api("GET", `/v1/policies/${budget.body.id}/status`, { token: user.apiKey })).body;
    for (let tries = 0; tries < 100 && (status.principals.some((entry: { spent_micro_usd: number }) => entry.spent_micro_usd === 0) || status.reserved_micro_usd > 0); tries++) {
      await Bun.sleep(50);
      status = (await server().api("GET", `/v1/policies/${budget.body.id}/status`, { token: user.apiKey })).body;
    }
    const ofOne = status.principals.find((entry: { principal_id: string }) => entry.principal_id === one.id);
    const dollars = (micro: number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(micro / 1e6);
    const policiesPage = (await getPage(server(), user, "/console/policies")).text;
    // The top level is the binding nearest its limit: the key with two requests.
    expect(policiesPage).toContain("2 of 5 requests in the last 1 minute");
    expect(policiesPage).toContain(`${dollars(status.spent_micro_usd)} spent`);
    expect(policiesPage).toContain(`of $10.00: ${dollars(status.remaining_micro_usd)} left`);
    expect(policiesPage).toMatch(/<svg class="bar"[^>]*role="img" aria-label="2 of 5 requests/);
    const keysPage = (await getPage(server(), user, "/console/keys")).text;
    // A key's row runs from its row header to the end of the row.
    const section = (name: string) => {
      const start = keysPage.indexOf(`>${name}</th>`);
      return keysPage.slice(start, keysPage.indexOf("</tr>", start));
    };
    expect(section("one")).toContain("2 of 5 requests");
    expect(section("one")).toContain(`${dollars(ofOne.spent_micro_usd)} spent`);
    expect(section("one")).toContain('<span class="hint">this key</span>');
    expect(section("other")).toContain("1 of 5 requests");
  });
});

describe("the operator's account key", () => {
  test("is listed on the keys page with the others, names its requests, and is revoked from there (a forged form changes nothing)", async () => {
    const user = await signedInUser(server(), 10_000_000);
    expect((await chat(user.apiKey)).status).toBe(200);
    await historyHolds(user, 1);
    const [accountKey] = (await server().api("GET", "/v1/account/keys", { token: user.apiKey })).body.data;
    const page = await getPage(server(), user, "/console/keys");
    expect(page.text).toContain('id="account-keys-heading"');
    expect(page.text).toContain(`<th scope="row" data-label="Name" class="wrap" id="key-${accountKey.id}">`);
    const requests = await getPage(server(), user, `/console/requests?api_key_id=${accountKey.id}`);
    expect(requests.text).toContain(`<td data-label="Key">${accountKey.display_name}</td>`);
    const forged = await postForm(server(), user, "/console/keys/revoke-account", { csrf_token: "forged", ns: user.namespaceId, id: accountKey.id });
    expect(forged.status).toBe(403);
    expect((await server().api("GET", "/v1/account", { token: user.apiKey })).status).toBe(200);
    const revoked = await submitForm(server(), user, "/console/keys", "/console/keys/revoke-account", { id: accountKey.id });
    expect(revoked.status).toBe(303);
    expect((await server().api("GET", "/v1/account", { token: user.apiKey })).status).toBe(401);
    expect((await getPage(server(), user, "/console/keys")).text).toMatch(new RegExp(`id="key-${accountKey.id}">[^<]*</th>\\n<td data-label="Prefix"><code>[^<]*</code></td>\\n<td data-label="Status" class="wrap">revoked`));
  });
});

describe("the models page", () => {
  test("lists every catalog model with its prices and context, and every provider with its live figures", async () => {
    const user = await signedInUser(server(), 10_000_000);
    await chat(user.apiKey);
    const page = await getPage(server(), user, "/console/models");
    expect(page.status).toBe(200);
    const models = (await server().api("GET", "/v1/models")).body.data as { id: string }[];
    const providers = (await server().api("GET", "/v1/providers")).body.data as { id: string; aggregate: { request_count: number } }[];
    for (const model of models) expect(page.text).toContain(`<strong>${model.id}</strong>`);
    for (const provider of providers) expect(page.text).toContain(`<span class="hint">${provider.id}</span>`);
    const openai = providers.find((provider) => provider.id === "mock-openai")!;
    expect(openai.aggregate.request_count).toBeGreaterThan(0);
    expect(page.text).toMatch(new RegExp(`${openai.id}</span></td>\\n<td data-label="Own key \\(BYOK\\)">[a-z]+</td>\\n<td data-label="Attempts" class="num">${openai.aggregate.request_count}</td>`));
    expect(page.text).toMatch(/<a href="\/console\/models\?ns=[^"]+" aria-current="page">Models<\/a>/);
  });
});

test("a chart keeps the first five groups of its order and folds the rest into Other", () => {
  const days = ["2026-01-01", "2026-01-02"];
  const rows = ["a", "b", "c", "d", "e", "f", "g"].map((group, index) => ({ date: days[index % 2]!, group, request_count: 10 - index, prompt_tokens: 0, completion_tokens: 0, spend_micro_usd: 0 }));
  const series = stackedSeries(rows, days, (row) => row.request_count, (group) => group ?? "none", ["a", "b", "c", "d", "e", "f", "g"]);
  expect(series.map((entry) => entry.label)).toEqual(["a", "b", "c", "d", "e", "Other"]);
  expect(series.at(-1)!.values).toEqual([4, 5]);
});

test("the overview's breakdown stops reading the history at its bound and says the count is partial", async () => {
  let pulled = 0;
  let closed = false;
  const record = (status: string, statusCode: number, funding: string) => ({ status, status_code: statusCode, funding_source: funding, api_key_id: "k_1", prompt_tokens: 1, completion_tokens: 2, final_charge_micro_usd: 5 }) as unknown as RequestRecordEnvelope;
  async function* pages() {
    try {
      for (let page = 0; page < 3; page++) {
        pulled++;
        yield [record("failed", 502, "cloud_credit"), record("succeeded", 200, "byok")];
      }
    } finally {
      closed = true;
    }
  }
  const partial = await requestBreakdown(pages(), 3);
  expect({ counted: partial.counted, complete: partial.complete, pulled, closed }).toEqual({ counted: 3, complete: false, pulled: 2, closed: true });
  expect(partial.kinds).toEqual([{ kind: "Upstream or gateway error (502)", count: 2 }]);
  expect(partial.failedByKey.get("k_1")).toBe(2);
  expect(partial.byok).toEqual({ requests: 1, promptTokens: 1, completionTokens: 2 });
  const whole = await requestBreakdown(pages(), 10);
  expect({ counted: whole.counted, complete: whole.complete }).toEqual({ counted: 6, complete: true });
  expect(whole.wallet).toEqual({ requests: 3, spendMicroUsd: 15 });
});
