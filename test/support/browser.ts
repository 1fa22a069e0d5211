import { chromium, type Browser, type Page, type Request, type Response } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * Debian's chromium, headless, driven by playwright-core. The extra flags keep it from
 * reaching out to the network on its own (there is no network in the test sandbox, and
 * its own connections would fail noisily). One browser per test file: launch it in
 * beforeAll and close it in afterAll.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * Loads `address` in `page` and counts what it fetched: every URL requested and the bytes
 * of every response body, until the network is idle (a page's first load).
 */
export async function firstLoad(page: Page, address: string): Promise<{ requested: string[]; bytes: number }> {
  const requested: string[] = [];
  let bytes = 0;
  const onRequest = (request: Request) => requested.push(request.url());
  const onResponse = async (response: Response) => {
    bytes += (await response.body().catch(() => Buffer.alloc(0))).length;
  };
  page.on("request", onRequest);
  page.on("response", onResponse);
  try {
    await page.goto(address, { waitUntil: "networkidle" });
  } finally {
    page.off("request", onRequest);
    page.off("response", onResponse);
  }
  return { requested, bytes };
}

/** Signs in through the console's sign-in form at `baseUrl` and waits for the overview. */
export async function signInInBrowser(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/console`);
  await page.fill("#email", email);
  await page.fill("#password", password);
  await Promise.all([page.waitForURL(/\/console$/), page.click("button:has-text('Sign in')")]);
}
