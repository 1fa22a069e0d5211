import { chromium, type Browser } from "playwright-core";

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
