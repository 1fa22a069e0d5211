import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { firstLoad, launchBrowser, signInInBrowser } from "../support/browser";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { CONSOLE_PASSWORD } from "../support/console-session";
import { createAccountWithPassword } from "../support/console-http";

/** Screenshots each run writes (git-ignored: test/console/.gitignore). */
const SCREENSHOTS = join(import.meta.dir, "screenshots");
/** The two docs/console-and-cli.md shows: written to docs/ only when asked (CONSOLE_DOC_SCREENSHOTS=1), so a test run changes no tracked file. */
const DOCS = process.env.CONSOLE_DOC_SCREENSHOTS === "1" ? join(import.meta.dir, "..", "..", "docs") : SCREENSHOTS;
const WIDE = { width: 1440, height: 900 };
const NARROW = { width: 375, height: 812 };

let browser: Browser;
let harness: InferenceHarness;
beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  [browser, harness] = await Promise.all([launchBrowser(), startInferenceHarness()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await harness?.close();
});

const url = (path: string) => harness.server.url + path;
const api = (method: string, path: string, token: string, body?: unknown) => harness.server.api(method, path, { token, ...(body === undefined ? {} : { body }) });

const signIn = (page: Page, email: string) => signInInBrowser(page, harness.server.url, email, CONSOLE_PASSWORD);

/**
 * A team's month: three keys making requests, spread over the last 30 days (their records
 * moved back in time, as if made then), one of them capped by a budget that refused one
 * request today.
 */
async function monthOfTraffic() {
  const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD, 200_000_000);
  const keys: Record<string, { id: string; token: string }> = {};
  for (const name of ["web app", "batch jobs", "support bot"]) {
    const made = await api("POST", "/v1/keys", account.apiKey, { display_name: name, scopes: ["inference:invoke"] });
    keys[name] = { id: made.body.id, token: made.body.token };
  }
  const models = ["mock-openai/gpt-4o-mini", "mock-anthropic/claude-sonnet-4-5"];
  // Each request names its day in its request id (`ago-<days>-…`); its record is moved back that far below.
  const calls: Promise<unknown>[] = [];
  for (let day = 0; day < 30; day++) {
    for (const [index, name] of ["web app", "batch jobs", "support bot"].entries()) {
      const count = (day * (index + 2) + index) % 4;
      for (let n = 0; n < count; n++) {
        const body = { model: models[(day + index + n) % 2], messages: [{ role: "user", content: "Hello" }] };
        calls.push(
          harness.server.api("POST", "/v1/chat/completions", { token: keys[name]!.token, body, headers: { "x-request-id": `ago-${day}-${index}-${n}-${crypto.randomUUID()}` } }).then((answer) => expect(answer.status).toBe(200)),
        );
      }
    }
  }
  await Promise.all(calls);
  const sql = harness.server.server.services.db.sql;
  for (let tries = 0; tries < 100; tries++) {
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from requests where namespace_id = ${account.namespaceId}`;
    if (row!.count >= calls.length) break;
    await Bun.sleep(50);
  }
  await sql`
    update requests set created_at = created_at - make_interval(days => split_part(request_id, '-', 2)::int),
                        completed_at = completed_at - make_interval(days => split_part(request_id, '-', 2)::int)
     where namespace_id = ${account.namespaceId} and request_id like 'ago-%'`;
  // Records moved around the metering writer: the usage rollups the overview reads are recomputed (migrations 0034, 0035).
  await sql`select usage_rollups_rebuild(${account.accountId})`;
  // The support bot's budget: what it spent is near its limit, and the next request is refused.
  const budget = await api("POST", "/v1/budgets", account.apiKey, { name: "support bot monthly", window: "month", limit_micro_usd: 1 });
  await api("POST", `/v1/policies/${budget.body.id}/bind`, account.apiKey, { principal_type: "api_key", principal_id: keys["support bot"]!.id });
  const refused = await api("POST", "/v1/chat/completions", keys["support bot"]!.token, { model: models[0], messages: [{ role: "user", content: "Hi" }] });
  expect(refused.status).toBe(402);
  for (let tries = 0; tries < 100; tries++) {
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from requests where namespace_id = ${account.namespaceId} and status = 'failed'`;
    if (row!.count === 1) break;
    await Bun.sleep(50);
  }
  return { account, keys, budgetId: budget.body.id as string };
}

describe("the dashboard in a browser", () => {
  test("signed in, a new user sees a month of spend split by key, finds a key's one failed request in two clicks, and sees its budget", async () => {
    const { account, keys, budgetId } = await monthOfTraffic();
    const context = await browser.newContext({ viewport: WIDE });
    const page = await context.newPage();
    try {
      await signIn(page, account.email);
      // The first load of a month's overview: every byte from this origin, well under 200,000.
      const { requested, bytes } = await firstLoad(page, url("/console"));
      for (const address of requested) expect(new URL(address).origin).toBe(new URL(harness.server.url).origin);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThan(200_000);
      console.log(`overview with a month of three keys' traffic, first load: ${bytes} bytes in ${requested.length} request(s)`);
      // A month of spend, split by key, is what the overview shows first.
      const spend = page.locator("#spend-chart");
      expect(await spend.locator("svg title").first().textContent()).toBe("Spend per day");
      expect(await spend.locator(".legend").textContent()).toContain("web app");
      expect(await spend.locator(".legend").textContent()).toContain("batch jobs");
      expect(await spend.locator("svg rect").count()).toBeGreaterThan(20);
      expect(await page.textContent("#usage-heading")).toContain("last 30 days");
      // Charts and tables side by side at 1440 px.
      const spendBox = (await spend.boundingBox())!;
      const requestsBox = (await page.locator("#requests-chart").boundingBox())!;
      expect(requestsBox.x).toBeGreaterThan(spendBox.x + spendBox.width - 1);
      expect(Math.abs(requestsBox.y - spendBox.y)).toBeLessThan(2);
      await page.screenshot({ path: join(DOCS, "console-overview.png"), fullPage: false });
      await page.screenshot({ path: join(SCREENSHOTS, "overview-1440.png"), fullPage: true });
      // Click one: the support bot's failed requests.
      const row = page.locator("#top-keys tbody tr", { hasText: "support bot" });
      await Promise.all([page.waitForURL(/status=failed/), row.getByRole("link", { name: "1 failed" }).click()]);
      expect(page.url()).toContain(`api_key_id=${keys["support bot"]!.id}`);
      const rows = page.locator("#requests-table tbody tr");
      expect(await rows.count()).toBe(1);
      expect(await page.inputValue("#filter-status")).toBe("failed");
      await page.screenshot({ path: join(SCREENSHOTS, "requests-failed-1440.png"), fullPage: true });
      // Click two: the request itself, with the policy that refused it.
      await Promise.all([page.waitForURL(/\/console\/requests\/[^?]+\?/), rows.first().locator("td[data-label=Time] a").click()]);
      expect(await page.textContent("#refusal")).toContain(budgetId);
      expect(await page.textContent("#request-status")).toBe("failed 402");
      expect(await page.getAttribute("text=Back to the requests", "href")).toContain("status=failed");
      await page.screenshot({ path: join(SCREENSHOTS, "request-detail-1440.png"), fullPage: true });
      // The table of every request, for docs/console-and-cli.md.
      await page.goto(url(`/console/requests?ns=${account.namespaceId}&limit=25`));
      // Dense: a row is about one line of text at 1440 px (the old list took ~180 px per request).
      const table = (await page.locator("#requests-table tbody").boundingBox())!;
      const perRow = table.height / (await rows.count());
      console.log(`requests table at 1440 px: ${await rows.count()} rows in ${Math.round(table.height)} px, ${perRow.toFixed(1)} px per request`);
      expect(await rows.count()).toBe(25);
      expect(perRow).toBeLessThan(60);
      await page.screenshot({ path: join(DOCS, "console-requests.png"), fullPage: false });
      // The budget bound to the key: how much of it is left, on the keys page.
      await page.click("nav >> text=API keys");
      const item = page.locator("#keys-table tr", { has: page.getByRole("rowheader", { name: "support bot" }) });
      expect(await item.textContent()).toContain("support bot monthly");
      expect(await item.textContent()).toMatch(/left/);
      // A budget of one micro-USD admits no request: blocked, not a bar with room.
      expect(await item.textContent()).toContain("Blocked:");
      await page.screenshot({ path: join(SCREENSHOTS, "keys-1440.png"), fullPage: true });
      await page.click("nav >> text=Policies");
      expect(await page.textContent(`#policy-${budgetId} ~ .policy-status`)).toMatch(/left/);
      await page.screenshot({ path: join(SCREENSHOTS, "policies-1440.png"), fullPage: true });
    } finally {
      await context.close();
    }
  }, 120_000);

  test("the overview's choices and the request filters work with the keyboard alone, and the page marks where it is", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD, 10_000_000);
    await api("POST", "/v1/chat/completions", account.apiKey, { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] });
    const context = await browser.newContext({ viewport: WIDE });
    const page = await context.newPage();
    try {
      await signIn(page, account.email);
      expect(await page.getAttribute("nav[aria-label=Console] a[aria-current=page]", "href")).toStartWith("/console?");
      const focused = () => page.evaluate("document.activeElement?.textContent");
      for (let presses = 0; presses < 60 && (await focused()) !== "7 days"; presses++) await page.keyboard.press("Tab");
      expect(await focused()).toBe("7 days");
      await Promise.all([page.waitForURL(/days=7/), page.keyboard.press("Enter")]);
      expect(await page.textContent("#usage-heading")).toContain("last 7 days");
      await page.goto(url("/console/requests"));
      await page.focus("#filter-status");
      await page.keyboard.type("S");
      expect(await page.inputValue("#filter-status")).toBe("succeeded");
      for (let presses = 0; presses < 20 && (await focused()) !== "Apply"; presses++) await page.keyboard.press("Tab");
      await Promise.all([page.waitForURL(/status=succeeded/), page.keyboard.press("Enter")]);
      expect(await page.locator("#requests-table tbody tr").count()).toBe(1);
      expect(await page.getAttribute("nav[aria-label=Console] a[aria-current=page]", "href")).toStartWith("/console/requests?");
    } finally {
      await context.close();
    }
  }, 60_000);

  test("at 375 px the overview, requests, a request, models and keys pages do not scroll sideways, and every field has a label", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD, 10_000_000);
    const long = "A_rather_long_unbroken_key_name_that_could_push_the_layout_sideways";
    const made = await api("POST", "/v1/keys", account.apiKey, { display_name: long, scopes: ["inference:invoke"] });
    await api("POST", "/v1/chat/completions", made.body.token, { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] });
    const sql = harness.server.server.services.db.sql;
    let requestId = "";
    for (let tries = 0; tries < 100 && requestId === ""; tries++) {
      const [row] = await sql<{ id: string }[]>`select id from requests where namespace_id = ${account.namespaceId}`;
      requestId = row?.id ?? "";
      if (requestId === "") await Bun.sleep(50);
    }
    const context = await browser.newContext({ viewport: NARROW });
    const page = await context.newPage();
    try {
      await signIn(page, account.email);
      for (const [path, shot] of [
        ["/console", "overview-375"],
        ["/console/requests", "requests-375"],
        [`/console/requests/${requestId}`, "request-detail-375"],
        ["/console/models", "models-375"],
        ["/console/keys", "keys-375"],
      ] as const) {
        await page.goto(url(path));
        expect({ path, width: await page.evaluate("document.documentElement.scrollWidth") }).toEqual({ path, width: 375 });
        const unlabelled = await page.evaluate(
          `Array.from(document.querySelectorAll("main input:not([type=hidden]), main select, main textarea")).filter((field) => !field.labels || field.labels.length === 0).map((field) => field.id || field.name)`,
        );
        expect({ path, unlabelled }).toEqual({ path, unlabelled: [] });
        await page.screenshot({ path: join(SCREENSHOTS, `${shot}.png`), fullPage: true });
      }
      // The first-run page of a namespace without requests, at 375 px too.
      const fresh = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD);
      await context.clearCookies();
      await signIn(page, fresh.email);
      expect(await page.isVisible("#first-run")).toBe(true);
      expect(await page.evaluate("document.documentElement.scrollWidth")).toBe(375);
      await page.screenshot({ path: join(SCREENSHOTS, "first-run-375.png"), fullPage: true });
    } finally {
      await context.close();
    }
  }, 90_000);
});
