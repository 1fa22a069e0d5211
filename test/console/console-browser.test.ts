import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { firstLoad, launchBrowser } from "../support/browser";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { createAccountWithPassword } from "../support/console-http";

const PASSWORD = "correct horse battery staple";

let browser: Browser;
let harness: InferenceHarness;
beforeAll(async () => {
  [browser, harness] = await Promise.all([launchBrowser(), startInferenceHarness()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await harness?.close();
});
beforeEach(async () => {
  await harness.server.server.services.db.sql`delete from auth_throttle`;
});

const url = (path: string) => harness.server.url + path;

async function withPage<T>(run: (page: Page, context: BrowserContext) => Promise<T>, viewport = { width: 1024, height: 768 }): Promise<T> {
  const context = await browser.newContext({ viewport });
  try {
    return await run(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

// Page-side expressions are strings: this project's TypeScript has no DOM library.

/** Signs in with the keyboard alone: the email field has focus, Tab moves on, Enter submits from the button. */
async function signInWithKeyboard(page: Page, email: string, password: string): Promise<void> {
  await page.goto(url("/console"));
  // The browser applies autofocus at a rendering step that may come after the load event
  // on a busy machine: wait for it (a page without it fails here after the timeout).
  await page.waitForFunction("document.activeElement?.id === 'email'", undefined, { timeout: 10_000 });
  expect(await page.evaluate("document.activeElement?.id")).toBe("email");
  await page.keyboard.type(email);
  await page.keyboard.press("Tab");
  expect(await page.evaluate("document.activeElement?.id")).toBe("password");
  await page.keyboard.type(password);
  await page.keyboard.press("Tab");
  expect(await page.evaluate("document.activeElement?.textContent")).toBe("Sign in");
  await Promise.all([page.waitForLoadState("load"), page.waitForURL(/\/console/), page.keyboard.press("Enter")]);
  await page.waitForSelector("h1");
}

describe("the console in a browser", () => {
  test("signing in with the keyboard shows the overview: email, wallet in USD and the namespace's usage of the last 30 days", async () => {
    const account = await createAccountWithPassword(harness.server, PASSWORD, 7_250_000);
    // One real request, so the usage shown is not all zeros.
    const answer = await harness.server.api("POST", "/v1/chat/completions", { token: account.apiKey, body: { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } });
    expect(answer.status).toBe(200);
    // Its record is written in a batch: waited for, bounded.
    const usageNow = async () => (await harness.server.api("GET", `/v1/namespaces/${account.namespaceId}/usage`, { token: account.apiKey })).body;
    let usage = await usageNow();
    for (let polls = 0; usage.request_count === 0 && polls < 200; polls++) {
      await Bun.sleep(50);
      usage = await usageNow();
    }
    expect(usage.request_count).toBe(1);
    const balance = (await harness.server.api("GET", "/v1/billing/balance", { token: account.apiKey })).body;
    await withPage(async (page) => {
      await signInWithKeyboard(page, account.email, PASSWORD);
      expect(await page.textContent("h1")).toBe("Overview");
      expect(await page.textContent("header")).toContain(account.email);
      expect(await page.textContent("#usage-requests")).toBe("1");
      const dollars = (micro: number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 }).format(micro / 1e6);
      expect(await page.textContent("#usage-spend")).toBe(dollars(usage.spend_micro_usd));
      expect(await page.textContent("#wallet-balance")).toBe(dollars(balance.balance_micro_usd));
      // The inline stylesheet applies under the page's Content-Security-Policy (allowed by its hash).
      expect(await page.evaluate(`getComputedStyle(document.querySelector("header")).backgroundColor`)).toBe("rgb(27, 31, 36)");
      // Focus is visible where the keyboard puts it.
      await page.keyboard.press("Tab");
      const outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle");
      expect(outline).not.toBe("none");
    });
  }, 60_000);

  test("the namespace picker shows another namespace's usage, and the links keep it", async () => {
    const account = await createAccountWithPassword(harness.server, PASSWORD);
    const second = await harness.server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "staging <b>" } });
    await withPage(async (page) => {
      await signInWithKeyboard(page, account.email, PASSWORD);
      expect(await page.textContent("#usage-heading")).toContain("default");
      await page.selectOption("#ns", second.body.id);
      await Promise.all([page.waitForURL(/ns=/), page.click("text=Show")]);
      expect(await page.textContent("#usage-heading")).toContain("staging <b>");
      expect(await page.getAttribute("a[href^='/console/account']", "href")).toBe(`/console/account?ns=${second.body.id}`);
    });
  }, 60_000);

  test("a wrong password shows an error and sets no session cookie", async () => {
    const account = await createAccountWithPassword(harness.server, PASSWORD);
    await withPage(async (page, context) => {
      await signInWithKeyboard(page, account.email, "not my password at all");
      expect(await page.textContent("#sign-in-error")).toBe("Email or password is incorrect.");
      expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("switchyard_session");
      // The email typed is kept; the password is not.
      expect(await page.inputValue("#email")).toBe(account.email);
      expect(await page.inputValue("#password")).toBe("");
    });
  }, 60_000);

  test("after 10 wrong passwords for an account, even the right one is refused for a while", async () => {
    const account = await createAccountWithPassword(harness.server, PASSWORD);
    await withPage(async (page, context) => {
      for (let i = 0; i < 10; i++) {
        await signInWithKeyboard(page, account.email, `wrong password ${i}`);
        expect(await page.textContent("#sign-in-error")).toBe("Email or password is incorrect.");
      }
      await signInWithKeyboard(page, account.email, PASSWORD);
      expect(await page.textContent("#sign-in-error")).toContain("Too many failed sign-ins");
      expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("switchyard_session");
    });
  }, 90_000);

  test("at 375 px wide no page scrolls sideways", async () => {
    const account = await createAccountWithPassword(harness.server, PASSWORD);
    await harness.server.api("PATCH", "/v1/account", { token: account.apiKey, body: { display_name: "A rather long display name ".repeat(3).trim() } });
    await withPage(
      async (page) => {
        await page.goto(url("/console"));
        expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
        await signInWithKeyboard(page, account.email, PASSWORD);
        expect(await page.textContent("h1")).toBe("Overview");
        expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
        await page.goto(url("/console/account"));
        expect(await page.textContent("h1")).toBe("Account");
        expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
      },
      { width: 375, height: 812 },
    );
  }, 60_000);

  test("the overview's first load is under 200,000 bytes and loads nothing from another origin", async () => {
    const account = await createAccountWithPassword(harness.server, PASSWORD);
    await withPage(async (page) => {
      await signInWithKeyboard(page, account.email, PASSWORD);
      const { requested, bytes } = await firstLoad(page, url("/console"));
      expect(requested.length).toBeGreaterThan(0);
      for (const address of requested) expect(new URL(address).origin).toBe(new URL(harness.server.url).origin);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThan(200_000);
      console.log(`overview first load: ${bytes} bytes in ${requested.length} request(s)`);
    });
  }, 60_000);

  test("the account page renames the account with a labelled field; markup in the name stays text", async () => {
    const account = await createAccountWithPassword(harness.server, PASSWORD);
    await withPage(async (page) => {
      await signInWithKeyboard(page, account.email, PASSWORD);
      await page.click("text=Account");
      await page.getByLabel("Display name").fill(`<script>document.title="owned"</script>`);
      await Promise.all([page.waitForURL(/saved=1/), page.getByRole("button", { name: "Save" }).click()]);
      expect(await page.textContent("#display-name")).toBe(`<script>document.title="owned"</script>`);
      expect(await page.title()).toBe("Account · Switchyard");
      const read = await harness.server.api("GET", "/v1/account", { token: account.apiKey });
      expect(read.body.display_name).toBe(`<script>document.title="owned"</script>`);
    });
  }, 60_000);
});
