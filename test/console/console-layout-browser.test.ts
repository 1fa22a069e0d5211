import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, signInInBrowser } from "../support/browser";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { CONSOLE_PASSWORD } from "../support/console-session";
import { createAccountWithPassword } from "../support/console-http";

/**
 * The pages changed for day one (models, keys, requests, policies) at 1440 px and 375 px:
 * nothing wider than the window, and at 1440 px no table cut off inside its scroller (the
 * models page's latency columns were). Screenshots go to test/console/screenshots/, or to
 * docs/ with CONSOLE_DOC_SCREENSHOTS=1 (docs/console-and-cli.md shows them).
 */
const SCREENSHOTS = join(import.meta.dir, "screenshots");
const DOCS = process.env.CONSOLE_DOC_SCREENSHOTS === "1" ? join(import.meta.dir, "..", "..", "docs") : SCREENSHOTS;
const WIDTHS = [
  { width: 1440, height: 900 },
  { width: 375, height: 812 },
] as const;

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

/** A namespace with a few keys (two named alike), served and refused requests, a blocked budget and a rate limit. */
async function someTraffic() {
  const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD, 50_000_000);
  const keys: { id: string; token: string }[] = [];
  for (const name of ["web app", "ci", "ci", "support bot"]) {
    const made = await api("POST", "/v1/keys", account.apiKey, { display_name: name, scopes: ["inference:invoke"] });
    keys.push({ id: made.body.id, token: made.body.token });
  }
  const budget = await api("POST", "/v1/budgets", account.apiKey, { name: "support bot daily", window: "day", limit_micro_usd: 2_000 });
  await api("POST", `/v1/policies/${budget.body.id}/bind`, account.apiKey, { principal_type: "api_key", principal_id: keys[3]!.id });
  const rate = await api("POST", "/v1/policies", account.apiKey, { name: "ci burst", kind: "rate_limit", spec: { window_secs: 60, max_requests: 30 } });
  await api("POST", `/v1/policies/${rate.body.id}/bind`, account.apiKey, { principal_type: "api_key", principal_id: keys[1]!.id });
  for (const [index, model] of ["mock-openai/gpt-4o-mini", "mock-anthropic/claude-sonnet-4-5", "mock-openai/gpt-4o-mini", "mock-openai/gpt-4o-mini"].entries()) {
    await api("POST", "/v1/chat/completions", keys[index]!.token, { model, messages: [{ role: "user", content: "Hello" }] });
  }
  const sql = harness.server.server.services.db.sql;
  for (let tries = 0; tries < 100; tries++) {
    const [row] = await sql<{ count: number }[]>`select count(*)::int as count from requests where namespace_id = ${account.namespaceId}`;
    if (row!.count >= 4) break;
    await Bun.sleep(50);
  }
  return { account, budgetId: budget.body.id as string };
}

describe("the day-one pages in a browser", () => {
  test("models, keys, requests and policies fit at 1440 px and 375 px; no table is cut off at 1440 px", async () => {
    const { account } = await someTraffic();
    for (const viewport of WIDTHS) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      try {
        await signIn(page, account.email);
        for (const name of ["models", "keys", "requests", "policies"]) {
          await page.goto(url(`/console/${name}?ns=${account.namespaceId}`));
          const fit = await page.evaluate(`({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })`);
          expect({ name, viewport: viewport.width, fit }).toEqual({ name, viewport: viewport.width, fit: { scrollWidth: viewport.width, innerWidth: viewport.width } });
          if (viewport.width === 1440) {
            // Each table whole in its own box: nothing to scroll sideways to find.
            const cut = await page.evaluate(`Array.from(document.querySelectorAll("main .scroll")).filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => box.querySelector("table")?.id)`);
            expect({ name, cut }).toEqual({ name, cut: [] });
          }
          await page.screenshot({ path: join(DOCS, `console-${name}-${viewport.width}.png`), fullPage: viewport.width === 1440 && (name === "keys" || name === "requests") });
        }
      } finally {
        await context.close();
      }
    }
  }, 120_000);

  test("a budget's amount is changed in place with the keyboard, and the page says it is no longer blocked", async () => {
    const { account, budgetId } = await someTraffic();
    const context = await browser.newContext({ viewport: WIDTHS[0] });
    const page = await context.newPage();
    try {
      await signIn(page, account.email);
      await page.goto(url(`/console/policies?ns=${account.namespaceId}`));
      const item = page.locator("li", { has: page.getByRole("heading", { name: "support bot daily" }) });
      expect(await item.locator(".policy-status").first().textContent()).toContain("Blocked:");
      await item.locator("summary", { hasText: "Change the limit" }).focus();
      await page.keyboard.press("Enter");
      await item.getByLabel("New amount in US dollars").fill("5");
      await Promise.all([page.waitForURL(/done=budget_changed/), item.getByLabel("New amount in US dollars").press("Enter")]);
      const changed = page.locator("li", { has: page.getByRole("heading", { name: "support bot daily" }) });
      expect(await changed.locator(".policy-status").first().textContent()).not.toContain("Blocked:");
      expect(await changed.textContent()).toContain("Spend at most $5.00 in any 24 hours");
      expect((await api("GET", `/v1/budgets/${budgetId}`, account.apiKey)).body).toMatchObject({ limit_micro_usd: 5_000_000 });
    } finally {
      await context.close();
    }
  }, 60_000);

  test("a policy preset's budget is changed in place with the keyboard; a refused amount keeps its form open with the reason beside the field", async () => {
    const { account } = await someTraffic();
    const webApp = (await api("GET", "/v1/keys", account.apiKey)).body.data.find((key: { display_name: string }) => key.display_name === "web app");
    const made = await api("POST", "/v1/policies", account.apiKey, {
      name: "web app bundle",
      kind: "preset",
      spec: { budget: { window: "day", limit_micro_usd: 1_000 }, rate_limit: { window_secs: 60, max_requests: 120 } },
    });
    await api("POST", `/v1/policies/${made.body.id}/bind`, account.apiKey, { principal_type: "api_key", principal_id: webApp.id });
    for (const viewport of WIDTHS) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      try {
        await signIn(page, account.email);
        await page.goto(url(`/console/policies?ns=${account.namespaceId}`));
        const item = () => page.locator("li", { has: page.getByRole("heading", { name: "web app bundle" }) });
        const amount = () => item().getByLabel("New amount in US dollars");
        expect(await item().locator(".policy-status").first().textContent()).toContain("Blocked:");
        await item().locator("summary", { hasText: "Change the budget" }).focus();
        await page.keyboard.press("Enter");
        // A refused amount: the page comes back with the preset's form open, what was typed, and why.
        await amount().fill("1.2345678");
        await Promise.all([page.waitForURL(/\/console\/policies\/edit-preset-budget$/), amount().press("Enter")]);
        expect(await page.getByRole("alert").textContent()).toContain("at most 6 decimal places");
        expect(await amount().isVisible()).toBe(true);
        expect(await amount().inputValue()).toBe("1.2345678");
        expect(await amount().getAttribute("aria-invalid")).toBe("true");
        const describedBy = (await amount().getAttribute("aria-describedby"))!;
        expect(await page.locator(`#${describedBy}`).textContent()).toContain("at most 6 decimal places");
        // The open form's foot at the window's foot: the preset, its limits and the form above it.
        await item().locator("details.edit[open]").evaluate((details) => details.scrollIntoView({ block: "end" }));
        await page.screenshot({ path: join(DOCS, `console-policies-preset-${viewport.width}.png`), fullPage: false });
        // Then an amount that fits: the page after the redirect says so, and admission follows.
        await item().getByLabel("Budget window").selectOption("month");
        await amount().fill("5");
        await Promise.all([page.waitForURL(/done=preset_budget_changed/), amount().press("Enter")]);
        const changed = item();
        expect(await changed.locator(".policy-status").first().textContent()).not.toContain("Blocked:");
        expect(await changed.textContent()).toContain("Spend at most $5.00 in any 30 days");
        expect(await changed.textContent()).toContain("At most 120 requests");
        expect(await page.locator("details.edit[open]").count()).toBe(0);
        // The other width starts again from the old amount.
        expect((await api("PUT", `/v1/policies/${made.body.id}`, account.apiKey, { spec: { budget: { window: "day", limit_micro_usd: 1_000 }, rate_limit: { window_secs: 60, max_requests: 120 } } })).status).toBe(200);
      } finally {
        await context.close();
      }
    }
    const stored = (await api("GET", `/v1/policies/${made.body.id}`, account.apiKey)).body.spec;
    expect(stored.rate_limit).toMatchObject({ window_secs: 60, max_requests: 120 });
  }, 90_000);
});
