import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { freshConfigHome, runSwitchyard } from "./run-switchyard";

/** `byok set` seals on the client; the server must open exactly what was piped in. */
let server: TestServer;
let account: TestAccount;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  account = await server.createAccount();
  env = { SWITCHYARD_URL: server.url, SWITCHYARD_API_KEY: account.apiKey, XDG_CONFIG_HOME: freshConfigHome() };
});
afterAll(() => server.close());

describe("byok", () => {
  test("set reads the key from stdin, and the server opens the sealed box to exactly that key; nothing prints it", async () => {
    const key = "sk-proj-cli-piped-secret-0123456789";
    const result = await runSwitchyard(["byok", "set", "openai"], env, `${key}\n`);
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^Stored the openai key \(sk-pro…\), sealed to \S+\.\n$/);
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "openai")).toBe(key);

    const listed = await runSwitchyard(["byok", "list", "--json"], env);
    expect(listed.exitCode).toBe(0);
    const fromRoute = await server.api("GET", "/v1/byok/keys", { token: account.apiKey });
    expect(JSON.parse(listed.stdout)).toEqual(fromRoute.body);
    expect(fromRoute.body.data[0]).toMatchObject({ provider_name: "openai", key_prefix: "sk-pro", api_base: null });
    const table = await runSwitchyard(["byok", "list"], env);
    expect(table.stdout).toMatch(/^PROVIDER\s+NAMESPACE\s+PREFIX\s+API BASE\s+UPDATED\s+LAST USED\s+LAST FAILURE\nopenai\s+\(account\)\s+sk-pro…\s+-\s+/);
    for (const output of [result, listed, table]) expect(output.stdout + output.stderr).not.toContain("piped-secret");
  });

  test("set --json prints the upload's answer, and --api-base is stored", async () => {
    const result = await runSwitchyard(["byok", "set", "groq", "--api-base", "https://groq.proxy.example.test/openai/v1", "--json"], env, "gsk_live_from_cli");
    expect(result.exitCode).toBe(0);
    const { kek_id } = (await server.api("GET", "/v1/byok/encryption-pubkey")).body;
    expect(JSON.parse(result.stdout)).toEqual({ provider_name: "groq", kek_id, key_prefix: "gsk_" });
    const credential = await server.server.services.byokKeys.credentialFor(account.accountId, null, "groq");
    expect(credential).toMatchObject({ key: "gsk_live_from_cli", apiBase: "https://groq.proxy.example.test/openai/v1" });
  });

  test("delete removes the key; deleting it again is the server's 404, exit 1", async () => {
    await runSwitchyard(["byok", "set", "mistral"], env, "mistral-key-to-delete");
    const deleted = await runSwitchyard(["byok", "delete", "mistral", "--json"], env);
    expect(deleted.exitCode).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ deleted: true });
    server.server.services.byokKeys.invalidate(account.accountId, "mistral");
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "mistral")).toBeUndefined();
    const again = await runSwitchyard(["byok", "delete", "mistral"], env);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain("not found");
  });

  test("the key is never taken from the command line, and an empty stdin is bad usage", async () => {
    const onArgv = await runSwitchyard(["byok", "set", "openai", "sk-typed-on-argv"], env);
    expect(onArgv.exitCode).toBe(2);
    expect(onArgv.stderr).not.toContain("sk-typed-on-argv");
    expect(onArgv.stderr).toContain("standard input");
    const empty = await runSwitchyard(["byok", "set", "openai"], env, "");
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toContain("no key on standard input");
  });

  test("an unknown provider is the server's refusal, exit 1", async () => {
    const result = await runSwitchyard(["byok", "set", "nobody"], env, "some-key-value");
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('unknown provider "nobody"');
  });

  // util-linux `script` gives the CLI a real terminal for its stdin.
  test.skipIf(!existsSync("/usr/bin/script"))("typed at a terminal, the key is read without echo and stored", async () => {
    const command = `${process.execPath} src/cli/switchyard.ts byok set deepseek`;
    const child = Bun.spawn(["/usr/bin/script", "-qec", command, "/dev/null"], {
      cwd: resolve(import.meta.dir, "../.."),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: env.XDG_CONFIG_HOME!, ...env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = child.stdout.getReader();
    let output = "";
    while (!output.includes("(input hidden)")) {
      const { value, done } = await reader.read();
      if (done) break;
      output += new TextDecoder().decode(value);
    }
    child.stdin.write("sk-typed-at-terminal-77\r");
    child.stdin.flush();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      output += new TextDecoder().decode(value);
    }
    expect(await child.exited).toBe(0);
    expect(output).toContain("Stored the deepseek key (sk-ty…)");
    expect(output).not.toContain("typed-at-terminal");
    expect(await server.server.services.byokKeys.keyFor(account.accountId, "deepseek")).toBe("sk-typed-at-terminal-77");
  });
});
