import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { getPage, signedInUser } from "../support/console-session";

/**
 * The overview's first-run panel shows commands that work where the README says they do:
 * a checkout after `npm ci` (npm and node on the PATH, no bare `bun`). Its blocks, read
 * from the page a new account gets, run here: the CLI through npm, curl, and the Node.js
 * SDK example saved as a file, each with the key in SWITCHYARD_API_KEY.
 */
const ROOT = resolve(import.meta.dir, "../..");

let harness: InferenceHarness;
let folder: string;
beforeAll(async () => {
  harness = await startInferenceHarness();
  folder = mkdtempSync(join(tmpdir(), "switchyard-first-run-"));
  symlinkSync(join(ROOT, "node_modules"), join(folder, "node_modules"));
});
afterAll(async () => {
  await harness?.close();
  rmSync(folder, { recursive: true, force: true });
});

const unescape = (text: string) =>
  text.replace(/&(lt|gt|quot|#39|#96|amp);/g, (_, name: string) => ({ lt: "<", gt: ">", quot: '"', "#39": "'", "#96": "`", amp: "&" })[name]!);

async function sh(script: string, env: Record<string, string>, cwd = ROOT) {
  const child = Bun.spawn(["bash", "-c", script], { cwd, env: { PATH: process.env.PATH!, HOME: folder, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
}

test("the first-run panel's commands run as shown: npm for the CLI, SWITCHYARD_API_KEY for the key, curl and Node for the request", async () => {
  const user = await signedInUser(harness.server, 1_000_000);
  const page = await getPage(harness.server, user, "/console");
  const panel = /<section[^>]*id="first-run"[\s\S]*?<\/section>/.exec(page.text)![0];
  // The panel names PUBLIC_URL; the test server listens elsewhere (a free port), so the
  // one change to the text is that address.
  const publicUrl = harness.server.server.services.config.publicUrl;
  const [setup, curl, node] = [...panel.matchAll(/<pre><code>([\s\S]*?)<\/code><\/pre>/g)].map((match) => unescape(match[1]!).replaceAll(publicUrl, harness.server.url));
  expect(panel).not.toMatch(/\bbun run\b|python|SWITCHYARD_KEY\b/i);

  // Step 1: every command runs through npm; login is a device flow, so only its help is run here.
  const lines = setup!.split("\n");
  expect(lines).toEqual([
    expect.stringMatching(/^export SWITCHYARD_URL=http/),
    "npm run switchyard -- login",
    "npm run --silent switchyard -- keys create --name my-app --scope inference:invoke",
    "export SWITCHYARD_API_KEY=brk_…",
  ]);
  const env = { SWITCHYARD_URL: harness.server.url };
  const help = await sh(`${lines[1]} --help`, env);
  expect({ code: help.code, out: help.stdout }).toEqual({ code: 0, out: expect.stringContaining("usage: switchyard login") });
  // Signed in with the account's key instead of a login, the key command prints a key.
  const created = await sh(lines[2]!, { ...env, SWITCHYARD_API_KEY: user.apiKey });
  expect(created.code).toBe(0);
  const token = /^(brk_\S+)$/m.exec(created.stdout)![1]!;

  // Step 2, curl, with the key where step 1 put it.
  const answered = await sh(curl!.replace(/\\\n/g, " "), { SWITCHYARD_API_KEY: token });
  expect({ code: answered.code, stderr: answered.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(answered.stdout).choices[0].message.content).toBe("Hello, world!");

  // Step 3, the Node.js SDK, saved and run as the panel says.
  writeFileSync(join(folder, "hello.mjs"), node!);
  const sdk = await sh("node hello.mjs", { SWITCHYARD_API_KEY: token }, folder);
  expect({ code: sdk.code, stdout: sdk.stdout, stderr: sdk.stderr }).toEqual({ code: 0, stdout: "Hello, world!\n", stderr: "" });
}, 120_000);
