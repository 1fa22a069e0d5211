import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, signInInBrowser } from "../support/browser";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { CONSOLE_PASSWORD } from "../support/console-session";
import { createAccountWithPassword } from "../support/console-http";
import { deviceTokens } from "../oauth/oauth-support";

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
const sql = () => harness.server.server.services.db.sql;

async function withPage<T>(run: (page: Page, context: BrowserContext) => Promise<T>, options: { viewport?: { width: number; height: number }; javaScriptEnabled?: boolean } = {}): Promise<T> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1024, height: 768 }, javaScriptEnabled: options.javaScriptEnabled ?? true });
  try {
    return await run(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

const signIn = (page: Page, email: string) => signInInBrowser(page, harness.server.url, email, CONSOLE_PASSWORD);

/** Submits a form by its button and waits for the page the server answers with. */
async function submit(page: Page, buttonName: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: buttonName, exact: true }).click()]);
}

const FIELDS = "input:not([type=hidden]), select, textarea";

describe("the management pages in a browser", () => {
  test("a key created in the console shows its token once; revoked from the page, the token gets 401", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD);
    await withPage(async (page) => {
      await signIn(page, account.email);
      await page.click("nav >> text=API keys");
      await page.getByLabel("Name", { exact: true }).fill("deploy bot");
      await page.getByLabel("keys:read", { exact: true }).check();
      await submit(page, "Create key");
      const token = await page.inputValue("#new-token");
      expect(token).toMatch(/^brk_/);
      expect(await page.textContent("#new-key-heading")).toContain("deploy bot");
      expect((await harness.server.api("GET", "/v1/keys", { token })).status).toBe(200);
      // Shown once: the page read again has it nowhere.
      await page.goto(url(`/console/keys?ns=${account.namespaceId}`));
      expect(await page.content()).not.toContain(token);
      // One row of the keys table per key, its name the row's header.
      const item = page.locator("tr", { has: page.getByRole("rowheader", { name: "deploy bot" }) });
      await Promise.all([page.waitForURL(/done=revoked/), item.getByRole("button", { name: "Revoke" }).click()]);
      expect(await page.textContent("#form-notice")).toContain("The key is revoked");
      expect(await item.textContent()).toContain("revoked");
      expect((await harness.server.api("GET", "/v1/keys", { token })).status).toBe(401);
    });
  }, 60_000);

  test("a BYOK key is sealed in the page: the server stores a box that opens to exactly the typed key, and no request carried the key", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD);
    const typed = `sk-live-${crypto.randomUUID()}-Ω`;
    await withPage(async (page) => {
      await signIn(page, account.email);
      const sent: string[] = [];
      page.on("request", (request) => sent.push(`${request.method()} ${request.url()}\n${JSON.stringify(request.headers())}\n${request.postData() ?? ""}`));
      await page.goto(url("/console/byok"));
      await page.waitForFunction("!document.getElementById('byok-submit').disabled");
      const provider = await page.inputValue("#byok-provider");
      await page.getByLabel("API key").fill(typed);
      await Promise.all([page.waitForURL(/done=saved/), page.getByRole("button", { name: "Seal and save" }).click()]);
      expect(await page.textContent("#form-notice")).toContain("Key saved");
      expect(await page.content()).not.toContain(typed);
      // What the server stored opens, with the server's own key, to exactly what was typed.
      const [row] = await sql()<{ kek_id: string; ciphertext: Uint8Array; key_prefix: string }[]>`
        select kek_id, ciphertext, key_prefix from byok_keys where account_id = ${account.accountId} and provider_name = ${provider}`;
      const opened = await harness.server.server.services.keks.open(row!.kek_id, new Uint8Array(row!.ciphertext));
      expect(new TextDecoder().decode(opened)).toBe(typed);
      expect(typed.startsWith(row!.key_prefix)).toBe(true);
      expect(row!.key_prefix.length).toBeLessThanOrEqual(8);
      // The browser fetched the public key and posted the form, and no request held the key in any form.
      expect(sent.some((entry) => entry.startsWith("GET ") && entry.includes("/v1/byok/encryption-pubkey"))).toBe(true);
      const posted = sent.filter((entry) => entry.startsWith("POST "));
      expect(posted.length).toBe(1);
      expect(posted[0]).toContain("ciphertext_b64=");
      for (const entry of sent) {
        expect(entry).not.toContain(typed);
        expect(entry).not.toContain(encodeURIComponent(typed));
        expect(entry).not.toContain(new URLSearchParams({ k: typed }).toString().slice(2));
        expect(entry).not.toContain(typed.slice(8, 24));
      }
      // Every script the page ran came from this origin.
      for (const entry of sent) expect(new URL(entry.split(" ")[1]!.split("\n")[0]!).origin).toBe(new URL(harness.server.url).origin);
    });
  }, 60_000);

  test("without script the BYOK form cannot be submitted, so the key cannot leave the page", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD);
    await withPage(
      async (page) => {
        await signIn(page, account.email);
        await page.goto(url("/console/byok"));
        expect(await page.isDisabled("#byok-submit")).toBe(true);
        expect(await page.textContent("noscript")).toContain("needs JavaScript");
        const posted: string[] = [];
        page.on("request", (request) => {
          if (request.method() === "POST") posted.push(request.postData() ?? "");
        });
        await page.getByLabel("API key").fill("sk-never-sent-123456");
        await page.getByLabel("API key").press("Enter");
        await page.waitForTimeout(300);
        expect(posted).toEqual([]);
        expect((await sql()`select 1 from byok_keys where account_id = ${account.accountId}`).length).toBe(0);
      },
      { javaScriptEnabled: false },
    );
  }, 60_000);

  test("a budget entered as $12.345678 is stored as 12345678 micro-USD and shown back as $12.345678", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD);
    await withPage(async (page) => {
      await signIn(page, account.email);
      await page.goto(url("/console/policies"));
      await page.locator("#budget-name").fill("monthly cap");
      await page.getByLabel("Window", { exact: true }).selectOption("month");
      await page.getByLabel("Limit in US dollars").fill("12.345678");
      await Promise.all([page.waitForURL(/done=budget/), page.getByRole("button", { name: "Create budget" }).click()]);
      const budgets = await harness.server.api("GET", "/v1/budgets", { token: account.apiKey });
      expect(budgets.body.data).toEqual([expect.objectContaining({ name: "monthly cap", window: "month", limit_micro_usd: 12_345_678 })]);
      const item = page.locator("li", { has: page.getByRole("heading", { name: "monthly cap" }) });
      expect(await item.textContent()).toContain("Spend at most $12.345678 in any 30 days");
      // Seven decimals are refused with the reason, and the typed amount is kept.
      await page.locator("#budget-name").fill("too fine");
      await page.getByLabel("Limit in US dollars").fill("0.0000001");
      await submit(page, "Create budget");
      expect(await page.textContent("#form-error")).toContain("at most 6 decimal places");
      expect(await page.inputValue("#budget-limit")).toBe("0.0000001");
    });
  }, 60_000);

  test("an OAuth client registered in the console shows its secret once, and the secret is what the server checks", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD);
    await withPage(async (page) => {
      await signIn(page, account.email);
      await page.goto(url("/console/oauth"));
      await page.locator("#client-name").fill("Reporting app");
      await page.getByLabel("Type").selectOption("confidential");
      await page.getByLabel("Redirect URIs, one per line").fill("https://reports.example/callback\nhttp://127.0.0.1:8765/cb\n");
      await page.getByLabel("Device code (CLIs, TVs)").check();
      await submit(page, "Register client");
      const secret = await page.inputValue("#new-client-secret");
      const clientId = await page.inputValue("#new-client-id");
      expect(secret).toMatch(/^brcs_/);
      const [row] = await sql()<{ client_secret_hash: Uint8Array; redirect_uris: string[]; allowed_grant_types: string[] }[]>`
        select client_secret_hash, redirect_uris, allowed_grant_types from oauth_clients where client_id = ${clientId} and account_id = ${account.accountId}`;
      expect(Buffer.from(row!.client_secret_hash).equals(createHash("sha256").update(secret).digest())).toBe(true);
      expect(row!.redirect_uris).toEqual(["https://reports.example/callback", "http://127.0.0.1:8765/cb"]);
      expect(row!.allowed_grant_types.sort()).toEqual(["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"]);
      await page.goto(url("/console/oauth"));
      expect(await page.content()).not.toContain(secret);
      expect(await page.content()).toContain(clientId);
    });
  }, 60_000);

  test("a routing preset is created with the keyboard alone", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD, 10_000_000);
    await withPage(async (page) => {
      await signIn(page, account.email);
      await page.goto(url("/console/routing-presets"));
      // From the top of the page, Tab reaches the form's first field.
      for (let presses = 0; presses < 40 && (await page.evaluate("document.activeElement?.id")) !== "preset-name"; presses++) await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement?.id")).toBe("preset-name");
      await page.keyboard.type("support-bot");
      await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement?.id")).toBe("preset-model");
      await page.keyboard.type("mock-openai/gpt-4o-mini");
      await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement?.id")).toBe("preset-system-prompt");
      await page.keyboard.type("You answer support questions.");
      await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Create preset");
      const outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle");
      expect(outline).not.toBe("none");
      await Promise.all([page.waitForURL(/done=created/), page.keyboard.press("Enter")]);
      expect(await page.textContent("#form-notice")).toBe("Routing preset created.");
      const presets = await harness.server.api("GET", "/v1/routing-presets", { token: account.apiKey });
      expect(presets.body.data).toEqual([expect.objectContaining({ name: "support-bot", model: "mock-openai/gpt-4o-mini", system_prompt: "You answer support questions.", disabled_at: null })]);
      // The preset works for inference right away.
      const answer = await harness.server.api("POST", "/v1/chat/completions", { token: account.apiKey, body: { model: "@support-bot", messages: [{ role: "user", content: "Hi" }] } });
      expect(answer.status).toBe(200);
    });
  }, 60_000);

  test("a guardrail is created and bound with the keyboard alone, and refuses the model it denies", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD, 10_000_000);
    await withPage(async (page) => {
      await signIn(page, account.email);
      await page.goto(url("/console/policies"));
      const focused = () => page.evaluate("document.activeElement?.id");
      const tabTo = async (id: string) => {
        await page.keyboard.press("Tab");
        expect(await focused()).toBe(id);
      };
      for (let presses = 0; presses < 80 && (await focused()) !== "guard-name"; presses++) await page.keyboard.press("Tab");
      expect(await focused()).toBe("guard-name");
      await page.keyboard.type("no claude");
      await tabTo("guard-allow");
      await tabTo("guard-deny");
      await page.keyboard.type("mock-anthropic/claude-sonnet-4-5");
      await page.keyboard.press("Enter");
      await page.keyboard.type("openai/gpt-4.1-mini");
      await tabTo("guard-streaming");
      expect(await page.isChecked("#guard-streaming")).toBe(true);
      await page.keyboard.press("Space");
      await tabTo("guard-max-tokens");
      await page.keyboard.type("4000");
      await tabTo("guard-byok");
      await page.keyboard.type("F");
      await tabTo("pattern-1-name");
      await page.keyboard.type("ticket");
      await tabTo("pattern-1-regex");
      await page.keyboard.type("TICKET-\\d{4}");
      await tabTo("pattern-1-action");
      await page.keyboard.type("R");
      for (const id of ["pattern-2-name", "pattern-2-regex", "pattern-2-action", "pattern-3-name", "pattern-3-regex", "pattern-3-action"]) await tabTo(id);
      await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Create guardrail");
      await Promise.all([page.waitForURL(/done=guardrail/), page.keyboard.press("Enter")]);
      expect(await page.textContent("#form-notice")).toContain("Guardrail created.");
      const [guardrail] = (await harness.server.api("GET", "/v1/policies?kind=guardrail", { token: account.apiKey })).body.data;
      expect(guardrail.spec).toEqual({
        model_deny: ["mock-anthropic/claude-sonnet-4-5", "openai/gpt-4.1-mini"],
        allow_streaming: false,
        max_request_tokens: 4000,
        byok: "forbidden",
        content_patterns: [{ name: "ticket", pattern: "TICKET-\\d{4}", action: "redact" }],
      });
      const item = page.locator("li", { has: page.getByRole("heading", { name: "no claude" }) });
      expect(await item.textContent()).toContain("Never these models: mock-anthropic/claude-sonnet-4-5, openai/gpt-4.1-mini");
      // Bind it to the whole namespace: focus the list, pick with the keyboard, submit with Enter.
      await item.getByLabel("Bind “no claude” to").focus();
      expect(await item.getByLabel("Bind “no claude” to").inputValue()).toBe(`namespace:${account.namespaceId}`);
      await page.keyboard.press("Tab");
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Bind");
      await Promise.all([page.waitForURL(/done=bound/), page.keyboard.press("Enter")]);
      expect(await item.textContent()).toContain("The whole namespace");
      const denied = await harness.server.api("POST", "/v1/chat/completions", {
        token: account.apiKey,
        body: { model: "mock-anthropic/claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }] },
      });
      expect(denied.status).toBe(403);
    });
  }, 60_000);

  test("at 375 px no management page scrolls sideways, and every field has a label", async () => {
    const account = await createAccountWithPassword(harness.server, CONSOLE_PASSWORD, 10_000_000);
    const token = account.apiKey;
    const long = "A_rather_long_unbroken_name_that_could_push_the_layout_sideways_".repeat(2);
    const key = await harness.server.api("POST", "/v1/keys", { token, body: { display_name: long, scopes: ["keys:read", "usage:read", "policy:read", "routing_preset:read"] } });
    const budget = await harness.server.api("POST", "/v1/budgets", { token, body: { name: long, window: "day", limit_micro_usd: 1 } });
    // A binding shows the key's long name under the budget.
    await harness.server.api("POST", `/v1/policies/${budget.body.id}/bind`, { token, body: { principal_type: "api_key", principal_id: key.body.id } });
    await harness.server.api("POST", "/v1/policies", { token, body: { name: "guard", kind: "guardrail", spec: { model_allow: [long, long] } } });
    await harness.server.api("POST", "/v1/routing-presets", { token, body: { name: "p", model: "mock-openai/gpt-4o-mini", system_prompt: long.repeat(5) } });
    await harness.server.api("POST", "/v1/oauth/clients", {
      token,
      body: { client_name: long, client_type: "public", redirect_uris: [`https://${"x".repeat(60)}.example/${long}`], allowed_grant_types: ["authorization_code"] },
    });
    await deviceTokens(harness.server, token, account.namespaceId, "usage:read");
    for (let i = 0; i < 3; i++) await harness.server.api("POST", "/v1/chat/completions", { token, body: { model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } });
    await Bun.sleep(300);
    await withPage(
      async (page) => {
        await signIn(page, account.email);
        for (const path of ["/console/requests", "/console/keys", "/console/byok", "/console/policies", "/console/routing-presets", "/console/oauth"]) {
          await page.goto(url(path));
          expect({ path, width: await page.evaluate("document.documentElement.scrollWidth") }).toEqual({ path, width: 375 });
          const fields = page.locator(FIELDS);
          const count = await fields.count();
          expect(count).toBeGreaterThan(0);
          // Each field's own labels (HTMLInputElement.labels), with the text a screen reader reads.
          const labelled = (await page.evaluate(
            `Array.from(document.querySelectorAll(${JSON.stringify(FIELDS)}), (element) => ({ id: element.id, text: Array.from(element.labels ?? [], (label) => label.textContent.trim()).join(" ") }))`,
          )) as { id: string; text: string }[];
          expect(labelled.length).toBe(count);
          for (const { id, text } of labelled) expect({ path, id, labelled: text.length > 0 }).toEqual({ path, id, labelled: true });
        }
        // The request history shows the requests made above, newest first, with their charge in USD.
        await page.goto(url("/console/requests"));
        // One table row per request (shown as a card at this width).
        const items = page.locator("main #requests-table tbody tr");
        expect(await items.count()).toBe(3);
        expect(await items.first().textContent()).toContain("mock-openai/gpt-4o-mini");
        expect(await items.first().locator("td[data-label=Cost]").textContent()).toMatch(/^\$\d+\.\d{2}/);
        // Two at a time: the older page has the third, and leads back (each row links to its request).
        const detailLinks = () => items.locator("td[data-label=Time] a").evaluateAll((links) => links.map((link) => link.getAttribute("href")));
        const ids = await detailLinks();
        await page.goto(url(`/console/requests?ns=${account.namespaceId}&limit=2`));
        expect(await detailLinks()).toEqual(ids.slice(0, 2));
        // The older page starts after the last request shown (the second), not at an offset.
        const second = decodeURIComponent(/\/console\/requests\/([^?]+)/.exec(ids[1]!)![1]!);
        await Promise.all([page.waitForURL((to) => to.searchParams.get("after") === second), page.click("text=Older requests")]);
        expect(await detailLinks()).toEqual(ids.slice(2));
        expect(await page.locator("text=Older requests").count()).toBe(0);
        await Promise.all([page.waitForURL((to) => !to.searchParams.has("after")), page.click("text=Newest requests")]);
        expect(await detailLinks()).toEqual(ids.slice(0, 2));
      },
      { viewport: { width: 375, height: 812 } },
    );
  }, 90_000);
});
