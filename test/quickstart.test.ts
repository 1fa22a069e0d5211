import { afterAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, spawnServer } from "./support/spawn-server";
import { createTestDatabase } from "./support/test-database";

/**
 * README "Quickstart", run as written: its marked blocks, on a fresh folder holding only
 * what a clone has (the checkout's files, linked) and the installed node_modules. The
 * marks, an HTML comment on the line before a fenced block:
 *
 *   <!-- quickstart-test: background -->  a terminal left running (the stand-in, the server)
 *   <!-- quickstart-test: run -->         commands typed in the third terminal, one shell
 *   <!-- quickstart-test: file <name> --> a file the reader saves, then runs with node
 *
 * The one change made to the text: the server listens on a free port, not 8080 (which
 * another test or program may hold), so `localhost:8080` becomes that address and PORT
 * and SWITCHYARD_URL say the same to the two CLIs.
 */
const ROOT = resolve(import.meta.dir, "..");
const CLONE_ENTRIES = ["package.json", "package-lock.json", "bunfig.toml", "tsconfig.json", "src", "sql", "workers", "test", "node_modules"];

interface QuickstartBlock {
  kind: "background" | "run" | "file";
  name?: string;
  code: string;
}

/** The marked blocks of the README's Quickstart, in order. */
function quickstartBlocks(readme: string): QuickstartBlock[] {
  const blocks: QuickstartBlock[] = [];
  for (const match of readme.matchAll(/<!-- quickstart-test: (background|run|file) ?([^\s>]*) -->\n```[a-z]*\n([\s\S]*?)```/g)) {
    blocks.push({ kind: match[1] as QuickstartBlock["kind"], ...(match[2] ? { name: match[2] } : {}), code: match[3]! });
  }
  return blocks;
}

const started: ChildProcess[] = [];
let folder: string | undefined;

afterAll(async () => {
  for (const child of started) {
    child.stdin?.end();
    // Each terminal is its own process group: npm, its shell and bun go together.
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // already gone
    }
  }
  await Promise.all(started.map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((done) => child.once("exit", done)))));
  if (folder) rmSync(folder, { recursive: true, force: true });
});

async function waitFor(what: string, ready: () => boolean | Promise<boolean>, output: () => string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what} not ready within ${timeoutMs} ms:\n${output()}`);
    await Bun.sleep(200);
  }
}

test("the README's quickstart works as written on a fresh folder: the first request is answered", async () => {
  const blocks = quickstartBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));
  expect(blocks.map((block) => block.kind)).toEqual(["background", "background", "run", "run", "file", "run"]);
  folder = mkdtempSync(join(tmpdir(), "switchyard-quickstart-"));
  for (const entry of CLONE_ENTRIES) symlinkSync(join(ROOT, entry), join(folder, entry));
  const terminals = blocks.filter((block) => block.kind === "background");
  const outputs: string[] = [];
  const startTerminal = (code: string, env: Record<string, string>) => {
    const child = spawn("bash", ["-c", code], { cwd: folder, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    started.push(child);
    const index = outputs.push("") - 1;
    for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (chunk: Buffer) => (outputs[index] += chunk.toString()));
  };
  // Nothing of the test runner's own settings: a reader's shell has PATH and HOME.
  const shellEnv = { PATH: process.env.PATH!, HOME: folder, LOG_LEVEL: "info" };
  // The stand-in first, as a reader starts it: its two listeners take ports of their own, and
  // a port chosen for the server before they bound could be handed to one of them (the
  // server then failed to start: "Is port … in use?").
  startTerminal(terminals[0]!.code, shellEnv);
  const catalog = join(folder, "providers.json");
  await waitFor("the stand-in's catalog", () => existsSync(catalog), () => outputs[0]!);
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const asHere = (code: string) => code.replaceAll("localhost:8080", address);
  const env = { ...shellEnv, PORT: String(port), SWITCHYARD_URL: `http://${address}` };
  for (const block of terminals.slice(1)) startTerminal(asHere(block.code), env);
  await waitFor("the server", () => fetch(`http://${address}/ping`).then((response) => response.ok, () => false), () => outputs.join("\n"));

  for (const block of blocks.filter((block) => block.kind === "file")) writeFileSync(join(folder, block.name!), asHere(block.code));
  // The third terminal: one shell, so what a block sets, the next one uses; after each
  // run block, its output between markers.
  const script = blocks
    .flatMap((block, index) => {
      if (block.kind === "run") return [asHere(block.code), `echo "@@end ${index}"`];
      if (block.kind === "file") return [`node ${block.name}`, `echo "@@end ${index}"`];
      return [];
    })
    .join("\n");
  const shell = Bun.spawn(["bash", "-c", script], { cwd: folder, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(shell.stdout).text(), new Response(shell.stderr).text(), shell.exited]);
  const context = `stdout:\n${stdout}\nstderr:\n${stderr}\nserver:\n${outputs[1]}`;
  expect({ code, context }).toEqual({ code: 0, context });
  const [, firstRequest, sdk, history] = stdout.split(/@@end \d+\n/);

  const answer = JSON.parse(firstRequest!);
  expect(answer.choices[0].message.content).toBe("Hello, world!");
  expect(answer.usage.cost_micro_usd).toBeGreaterThan(0);
  expect(sdk).toMatch(/^Hello, world! \d+ µUSD\n$/);
  const records = JSON.parse(history!).data as { model_id?: string; status: string }[];
  expect(records.length).toBe(2);
  // The keys stay out of every output but the one that made them.
  expect(stderr).not.toContain("brk_");
}, 240_000);

test("an upstream nothing listens on is a 503 that the server's log explains at warn: the provider and its address, never a key", async () => {
  const database = await createTestDatabase();
  const closedPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "switchyard-unreachable-"));
  const providersFile = join(dir, "providers.json");
  writeFileSync(
    providersFile,
    JSON.stringify({
      providers: [{ id: "gone", name: "Gone", protocol: "openai-chat", base_url: `http://127.0.0.1:${closedPort}/v1`, api_key_env: "GONE_API_KEY" }],
      models: [{ id: "gone/model", endpoints: [{ provider: "gone", provider_model_id: "model", pricing: { input: 1, output: 1 } }] }],
    }),
  );
  const platformKey = "sk-gone-platform-key-0123456789";
  const server = await spawnServer({ DATABASE_URL: database.url, ADMIN_TOKEN: "op", PROVIDERS_FILE: providersFile, GONE_API_KEY: platformKey, LOG_LEVEL: "info" });
  try {
    const account = await fetch(`${server.url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: "Bearer op", "content-type": "application/json" },
      body: JSON.stringify({ email: "gone@example.test", credit_micro_usd: 1_000_000 }),
    }).then((response) => response.json() as Promise<{ api_key: string }>);
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gone/model", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status).toBe(503);
      await response.text();
    }
    await Bun.sleep(200);
    const lines = server
      .output()
      .split("\n")
      .filter((line) => line.includes('"upstream unreachable"'));
    // Once for the three requests: a provider that is down must not fill the log.
    expect(lines.length).toBe(1);
    const logged = JSON.parse(lines[0]!);
    expect(logged).toMatchObject({ level: "warn", provider: "gone", address: `127.0.0.1:${closedPort}` });
    expect(server.output()).not.toContain(platformKey);
    expect(server.output()).not.toContain(account.api_key);
  } finally {
    server.process.kill("SIGTERM");
    await server.exited;
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
