import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { spawnServer } from "../helpers/spawn-server";

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
});
