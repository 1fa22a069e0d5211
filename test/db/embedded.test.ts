import { describe, expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { spawnServer } from "../support/spawn-server";
import { catalogFor, mockProviderEnv, startMockUpstream } from "../support/mock-upstreams";

describe("the embedded default database", () => {
  test("boots without DATABASE_URL, serves an operator-created key, and keeps data in DATA_DIR across restarts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "switchyard-data-"));
    const env = { DATABASE_URL: "", DATA_DIR: dataDir, ADMIN_TOKEN: "op" };
    try {
      const first = await spawnServer(env, 60_000);
      let apiKey: string;
      try {
        expect((await fetch(`${first.url}/ping`)).status).toBe(200);
        const created = await fetch(`${first.url}/admin/accounts`, {
          method: "POST",
          headers: { authorization: "Bearer op", "content-type": "application/json" },
          body: JSON.stringify({ email: "embedded@example.test" }),
        }).then((r) => r.json() as Promise<any>);
        apiKey = created.api_key;
        // Concurrent requests over the single embedded connection must not hang.
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => fetch(`${first.url}/v1/namespaces`, { headers: { "x-api-key": apiKey } }).then((r) => r.status)),
        );
        expect(answers.every((status) => status === 200)).toBe(true);
        expect(first.output()).toContain('"database":"embedded"');
      } finally {
        first.process.kill("SIGTERM");
        expect(await first.exited).toBe(0);
      }
      const second = await spawnServer(env, 60_000);
      try {
        const listed = await fetch(`${second.url}/v1/namespaces`, { headers: { authorization: `Bearer ${apiKey}` } }).then((r) => r.json() as Promise<any>);
        expect(listed.data.map((n: { name: string }) => n.name)).toEqual(["default"]);
      } finally {
        second.process.kill("SIGTERM");
        await second.exited;
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  test("meters inference on the embedded database too (its write path takes the insert statements, not COPY)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "switchyard-data-"));
    const mock = await startMockUpstream("openai-chat", { apiKey: "embedded-mock-key" });
    const providersFile = join(dataDir, "providers.json");
    writeFileSync(providersFile, JSON.stringify(catalogFor([mock])));
    const server = await spawnServer({ DATABASE_URL: "", DATA_DIR: dataDir, ADMIN_TOKEN: "op", PROVIDERS_FILE: providersFile, ...mockProviderEnv("embedded-mock-key") }, 60_000);
    try {
      const created = await fetch(`${server.url}/admin/accounts`, {
        method: "POST",
        headers: { authorization: "Bearer op", "content-type": "application/json" },
        body: JSON.stringify({ email: "metered@example.test", credit_micro_usd: 1_000_000 }),
      }).then((r) => r.json() as Promise<any>);
      const headers = { authorization: `Bearer ${created.api_key}`, "content-type": "application/json" };
      for (const stream of [false, true]) {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: "POST",
          headers: { ...headers, "x-request-id": `embedded-${stream}` },
          body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", stream, messages: [{ role: "user", content: "Hi" }] }),
        });
        expect(response.status).toBe(200);
        await response.text();
      }
      let listed: any;
      for (let tries = 0; tries < 500; tries++) {
        listed = await fetch(`${server.url}/v1/namespaces/me/requests`, { headers }).then((r) => r.json());
        if (listed.data?.length === 2) break;
        await Bun.sleep(20);
      }
      expect(listed.data).toHaveLength(2);
      for (const record of listed.data) {
        expect(record.usage_evidence).toMatchObject({ source: "provider_reported" });
        expect(record.usage_evidence.raw_usage_frames.length).toBeGreaterThan(0);
        expect(record.final_charge_micro_usd).toBeGreaterThan(0);
      }
      const receipt = await fetch(`${server.url}/v1/requests/embedded-true/settlement`, { headers }).then((r) => r.json() as Promise<any>);
      expect(receipt).toMatchObject({ request_id: "embedded-true", state: "computed" });
      const balance = await fetch(`${server.url}/v1/billing/balance`, { headers }).then((r) => r.json() as Promise<any>);
      const charged = listed.data.reduce((sum: number, record: any) => sum + record.final_charge_micro_usd, 0);
      expect(balance.balance_micro_usd).toBe(1_000_000 - charged);
    } finally {
      server.process.kill("SIGTERM");
      await server.exited;
      await mock.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  test("keeps DATA_DIR private (folders 0700, files 0600, also what was there before) and serves the database on no TCP port", async () => {
    for (const variant of ["plain", "long", "symlink"] as const) {
      const long = variant === "long";
      const base = mkdtempSync(join(tmpdir(), "switchyard-data-"));
      // Too long a path for a Unix socket: the socket moves to a private temporary folder.
      const realDir = long ? join(base, "d".repeat(90)) : join(base, "data");
      mkdirSync(join(realDir, "pglite", "old"), { recursive: true });
      // DATA_DIR may name its folder through a symbolic link.
      const dataDir = variant === "symlink" ? join(base, "link") : realDir;
      if (variant === "symlink") symlinkSync(realDir, dataDir);
      writeFileSync(join(dataDir, "pglite", "old", "left-over"), "x");
      chmodSync(join(dataDir, "pglite", "old", "left-over"), 0o666);
      chmodSync(join(dataDir, "pglite", "old"), 0o777);
      chmodSync(realDir, 0o755);
      const server = await spawnServer({ DATABASE_URL: "", DATA_DIR: dataDir, ADMIN_TOKEN: "op" }, 60_000);
      try {
        const created = await fetch(`${server.url}/admin/accounts`, {
          method: "POST",
          headers: { authorization: "Bearer op", "content-type": "application/json" },
          body: JSON.stringify({ email: `private-${variant}@example.test` }),
        });
        expect(created.status).toBe(200);
        const loose: string[] = [];
        const walk = (path: string) => {
          const stat = lstatSync(path);
          if (stat.isSymbolicLink()) return;
          if ((stat.mode & 0o077) !== 0) loose.push(`${path} ${(stat.mode & 0o777).toString(8)}`);
          if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
        };
        walk(realDir);
        expect(loose).toEqual([]);
        expect(readdirSync(dataDir).includes(".s.PGSQL.5432")).toBe(!long);
        // Every TCP socket the process listens on: only the HTTP port.
        const inodes = new Set<string>();
        for (const fd of readdirSync(`/proc/${server.process.pid}/fd`)) {
          const target = (() => { try { return readlinkSync(`/proc/${server.process.pid}/fd/${fd}`); } catch { return ""; } })();
          const match = /^socket:\[(\d+)\]$/.exec(target);
          if (match) inodes.add(match[1]!);
        }
        const listening: number[] = [];
        for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
          for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
            const fields = line.trim().split(/\s+/);
            if (fields.length > 9 && fields[3] === "0A" && inodes.has(fields[9]!)) listening.push(parseInt(fields[1]!.split(":")[1]!, 16));
          }
        }
        expect(listening).toEqual([Number(new URL(server.url).port)]);
      } finally {
        server.process.kill("SIGTERM");
        expect(await server.exited).toBe(0);
        rmSync(base, { recursive: true, force: true });
      }
    }
  }, 120_000);
});
