import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestDatabase } from "../support/test-database";
import { spawnServer } from "../support/spawn-server";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

/** The pid in the answering process's /metrics (`switchyard_process{pid=…}`), over a new connection each time. */
async function answeringPid(url: string): Promise<number> {
  const text = await fetch(`${url}/metrics`, { headers: { connection: "close" } }).then((r) => r.text());
  const match = /^switchyard_process\{pid="(\d+)",process="(\d+)"\} 1$/m.exec(text);
  if (!match) throw new Error(`no switchyard_process in /metrics:\n${text.slice(0, 500)}`);
  return Number(match[1]);
}

/**
 * Adds the pids that answer over new connections until two have, or 30 s have passed: the
 * second process may still be starting when the first answers /ping (on a busy machine,
 * longer than a fixed number of requests takes).
 */
async function collectAnsweringPids(url: string, pids: Set<number>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (pids.size < 2 && Date.now() < deadline) pids.add(await answeringPid(url));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("SERVER_PROCESSES", () => {
  test("two processes serve one port, each with its own /metrics; SIGTERM to the primary stops both and it exits 0", async () => {
    const server = await spawnServer({ DATABASE_URL: database.url, ADMIN_TOKEN: "op", SERVER_PROCESSES: "2" });
    const pids = new Set<number>();
    try {
      await collectAnsweringPids(server.url, pids);
      expect(pids.size).toBe(2);
      expect(pids.has(server.process.pid)).toBe(false);
      // Both share the database: an account made through one is seen by the other.
      const created = await fetch(`${server.url}/admin/accounts`, {
        method: "POST",
        headers: { authorization: "Bearer op", "content-type": "application/json", connection: "close" },
        body: JSON.stringify({ email: "processes@example.test" }),
      }).then((r) => r.json() as Promise<{ api_key: string }>);
      for (let i = 0; i < 6; i++) {
        const listed = await fetch(`${server.url}/v1/namespaces`, { headers: { authorization: `Bearer ${created.api_key}`, connection: "close" } });
        expect(listed.status).toBe(200);
      }
      server.process.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      for (const pid of pids) expect(alive(pid)).toBe(false);
      expect(server.output()).toContain('"process":"1"');
      expect(server.output()).toContain('"process":"2"');
    } finally {
      server.process.kill("SIGKILL");
      for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  }, 60_000);

  test("a process that dies after it served is started again", async () => {
    const server = await spawnServer({ DATABASE_URL: database.url, ADMIN_TOKEN: "op", SERVER_PROCESSES: "2" });
    const pids = new Set<number>();
    try {
      await collectAnsweringPids(server.url, pids);
      const [victim] = [...pids];
      process.kill(victim!, "SIGKILL");
      const seen = new Set<number>();
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && seen.size < 2) {
        const pid = await answeringPid(server.url).catch(() => undefined);
        if (pid !== undefined && pid !== victim) seen.add(pid);
        if (pid === undefined) await Bun.sleep(100);
      }
      // The survivor and the replacement both answer.
      expect(seen.size).toBe(2);
      expect(server.output()).toContain("server process exited unexpectedly; starting it again");
      for (const pid of seen) pids.add(pid);
      server.process.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    } finally {
      server.process.kill("SIGKILL");
      for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  }, 60_000);

  test("a process that cannot start stops the primary with exit code 1", async () => {
    // Nothing listens on port 1: every server process fails to reach the database.
    const spawned = spawnServer({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/none", SERVER_PROCESSES: "2" }, 20_000);
    await expect(spawned).rejects.toThrow("server exited early (1)");
  }, 30_000);
});
