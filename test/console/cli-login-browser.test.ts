import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { DEFAULT_OAUTH_LIFETIMES } from "../../src/config";
import { launchBrowser } from "../support/browser";
import { createAccountWithPassword } from "../support/console-http";
import { freePort } from "../support/spawn-server";
import { startTestServer, type TestServer } from "../support/test-server";
import { freshConfigHome, runSwitchyard, startLogin } from "../cli/run-switchyard";

const PASSWORD = "correct horse battery staple";

let browser: Browser;
let server: TestServer;
let publicUrl: string;
beforeAll(async () => {
  // PUBLIC_URL is the listener's own address, so the URL the CLI prints is the one the browser opens.
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  [browser, server] = await Promise.all([
    launchBrowser(),
    startTestServer({ port, publicUrl, oauthLifetimes: { ...DEFAULT_OAUTH_LIFETIMES, devicePollIntervalSecs: 1 } }),
  ]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test("switchyard login: the code from its stdout approved in the browser for a picked namespace; it exits 0 and usage --json works there", async () => {
  const account = await createAccountWithPassword(server, PASSWORD);
  const second = await server.api("POST", "/v1/namespaces", { token: account.apiKey, body: { name: "from-the-cli" } });
  const env = { SWITCHYARD_URL: server.url, XDG_CONFIG_HOME: freshConfigHome() };
  const login = await startLogin([], env);

  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${publicUrl}/oauth/device?user_code=${login.userCode}`);
    expect(await page.textContent("h1")).toBe("Sign in");
    await page.getByLabel("Email").fill(account.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await Promise.all([page.waitForURL(/\/oauth\/device/), page.getByRole("button", { name: "Sign in" }).click()]);
    expect(await page.textContent("#device-user-code")).toBe(login.userCode);
    await page.getByLabel("Namespace it may use").selectOption(second.body.id);
    await Promise.all([page.waitForLoadState("load"), page.getByRole("button", { name: "Approve" }).click()]);
    expect(await page.textContent("#device-result")).toContain("You can return to your terminal");
  } finally {
    await context.close();
  }

  const result = await login.finished;
  expect(result.stdout).toContain(`${publicUrl}/oauth/device?user_code=${login.userCode}`);
  expect(result.exitCode).toBe(0);

  const whoami = await runSwitchyard(["whoami", "--json"], env);
  expect(whoami.exitCode).toBe(0);
  expect(JSON.parse(whoami.stdout)).toMatchObject({ account_id: account.accountId, namespace_id: second.body.id });
  const usage = await runSwitchyard(["usage", "--json"], env);
  expect(usage.exitCode).toBe(0);
  const body = JSON.parse(usage.stdout);
  expect(body.request_count).toBe(0);
  expect(typeof body.from).toBe("string");
}, 90_000);
