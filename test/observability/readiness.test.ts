import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, createServer, type Server, type Socket } from "node:net";
import postgres from "postgres";
import { createTestDatabase } from "../support/test-database";
import { spawnServer, type SpawnedServer } from "../support/spawn-server";
import { startTestServer, type TestServer } from "../support/test-server";

/**
 * GET /ready (docs/operations.md "Readiness and drain"): 200 {"status":"ready"} while the database answers with
 * every migration applied; 503 {"status":"not_ready","reason"} while it does not answer
 * (without hanging), while a migration is pending, and from SIGTERM on, while the listener
 * keeps serving for SHUTDOWN_DELAY_MS.
 */
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;
beforeAll(async () => {
  database = await createTestDatabase();
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql.end();
  await database.drop();
});

async function ready(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}/ready`, { headers: { connection: "close" } });
  return { status: response.status, body: await response.text() };
}

/** Asks /ready until it answers `status` (each answer comes back: the check never hangs); returns that answer's body. */
async function readyUntil(url: string, status: number, attempts = 200): Promise<string> {
  let last: { status: number; body: string } | undefined;
  for (let i = 0; i < attempts; i++) {
    last = await ready(url);
    if (last.status === status) return last.body;
    await Bun.sleep(50);
  }
  throw new Error(`/ready stayed ${last?.status} ${last?.body}`);
}

/** A TCP relay in front of PostgreSQL that can stop passing bytes (a database that hangs) and pass them again. */
async function startRelay(target: URL): Promise<{ port: number; freeze(): void; thaw(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
      if (frozen) socket.pause();
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  // Bound on a port the kernel picks: no window for another socket to take it first.
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    freeze() {
      frozen = true;
      for (const socket of sockets) socket.pause();
    },
    thaw() {
      frozen = false;
      for (const socket of sockets) socket.resume();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("GET /ready", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({}, { url: database.url, drop: async () => {} });
  });
  afterAll(() => server.close());

  test("200 with exactly {\"status\":\"ready\"} while the database answers with every migration applied", async () => {
    const answer = await fetch(`${server.url}/ready`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toContain("application/json");
    expect(await answer.text()).toBe('{"status":"ready"}');
  });

  test("503 migrations_pending while a migration this code knows is not recorded, 200 again once it is", async () => {
    const [latest] = await sql<{ version: number; name: string; checksum: string }[]>`select version, name, checksum from schema_migrations order by version desc limit 1`;
    await sql`delete from schema_migrations where version = ${latest!.version}`;
    try {
      expect(await readyUntil(server.url, 503)).toBe('{"status":"not_ready","reason":"migrations_pending"}');
      // Liveness is another matter: the process runs.
      expect((await fetch(`${server.url}/ping`)).status).toBe(200);
    } finally {
      await sql`insert into schema_migrations (version, name, checksum) values (${latest!.version}, ${latest!.name}, ${latest!.checksum})`;
    }
    expect(await readyUntil(server.url, 200)).toBe('{"status":"ready"}');
  });
});

test("a database that stops answering: /ready answers 503 database_unreachable (it does not hang), and 200 once it answers again", async () => {
  const relay = await startRelay(new URL(database.url));
  const through = new URL(database.url);
  through.port = String(relay.port);
  const server = await spawnServer({ DATABASE_URL: through.toString(), DATABASE_POOL_SIZE: "4" });
  try {
    expect(await readyUntil(server.url, 200)).toBe('{"status":"ready"}');
    relay.freeze();
    expect(await readyUntil(server.url, 503)).toBe('{"status":"not_ready","reason":"database_unreachable"}');
    // Asked again and again while the database hangs, it still answers every time.
    for (let i = 0; i < 5; i++) expect((await ready(server.url)).status).toBe(503);
    relay.thaw();
    expect(await readyUntil(server.url, 200)).toBe('{"status":"ready"}');
  } finally {
    server.process.kill("SIGKILL");
    await server.exited;
    await relay.close();
  }
}, 60_000);

describe("SIGTERM with SHUTDOWN_DELAY_MS", () => {
  test("/ready turns 503 shutting_down at once while the listener keeps serving; then it stops accepting and exits 0", async () => {
    const server = await spawnServer({ DATABASE_URL: database.url, ADMIN_TOKEN: "op", SHUTDOWN_DELAY_MS: "3000" });
    try {
      expect(await readyUntil(server.url, 200)).toBe('{"status":"ready"}');
      server.process.kill("SIGTERM");
      expect(await readyUntil(server.url, 503)).toBe('{"status":"not_ready","reason":"shutting_down"}');
      // Still accepting new connections and serving them, readiness aside.
      expect((await fetch(`${server.url}/ping`, { headers: { connection: "close" } })).status).toBe(200);
      const created = await fetch(`${server.url}/admin/accounts`, {
        method: "POST",
        headers: { authorization: "Bearer op", "content-type": "application/json", connection: "close" },
        body: JSON.stringify({ email: "draining@example.test" }),
      });
      expect(created.status).toBe(200);
      expect(await server.exited).toBe(0);
      expect(await fetch(`${server.url}/ping`).then(() => "answered", () => "refused")).toBe("refused");
      expect(server.output()).toContain("not ready; serving until the drain delay ends");
    } finally {
      server.process.kill("SIGKILL");
    }
  }, 60_000);

  test("with SERVER_PROCESSES=2 every process turns not ready and keeps serving through the delay", async () => {
    // The delay outlasts the probing below even on a loaded machine.
    const server = await spawnServer({ DATABASE_URL: database.url, SERVER_PROCESSES: "2", SHUTDOWN_DELAY_MS: "6000" });
    try {
      // A new connection each time: the kernel spreads them over both processes.
      const answeringPid = async () => {
        const metrics = await fetch(`${server.url}/metrics`, { headers: { connection: "close" } }).then((r) => r.text());
        return /^switchyard_process\{pid="(\d+)"/m.exec(metrics)![1]!;
      };
      const listening = new Set<string>();
      const deadline = Date.now() + 30_000;
      while (listening.size < 2 && Date.now() < deadline) listening.add(await answeringPid());
      expect(listening.size).toBe(2);
      // A balancer's probes reach both processes.
      for (let i = 0; i < 30; i++) expect((await ready(server.url)).status).toBe(200);
      server.process.kill("SIGTERM");
      // The primary passes SIGTERM to each process in turn: the first 503 may come from one
      // while the other has yet to handle its signal. Wait until 20 probes in a row answer
      // 503 (both processes have turned; one still ready would show within a few probes).
      for (let inARow = 0, probes = 0; inARow < 20; probes++) {
        if (probes > 400) throw new Error("/ready did not answer 503 twenty times in a row");
        inARow = (await ready(server.url)).status === 503 ? inARow + 1 : 0;
      }
      const answering = new Set<string>();
      for (let i = 0; i < 30 && answering.size < 2; i++) {
        expect(await ready(server.url)).toEqual({ status: 503, body: '{"status":"not_ready","reason":"shutting_down"}' });
        answering.add(await answeringPid());
      }
      expect(answering).toEqual(listening);
      expect(await server.exited).toBe(0);
    } finally {
      server.process.kill("SIGKILL");
    }
  }, 60_000);
});

describe("bun src/main.ts migrate", () => {
  test("applies every migration to a fresh database and exits 0; a second run finds nothing to do", async () => {
    const fresh = await createTestDatabase();
    try {
      for (const run of [1, 2]) {
        const child = Bun.spawn([process.execPath, "src/main.ts", "migrate"], { env: { ...process.env, DATABASE_URL: fresh.url, LOG_LEVEL: "info" }, stdout: "pipe", stderr: "pipe" });
        const output = await new Response(child.stdout).text();
        expect(await child.exited).toBe(0);
        expect(output).toContain("migrations up to date");
        if (run === 2) expect(output).toContain('"applied":[]');
      }
      const check = postgres(fresh.url, { max: 1, onnotice: () => {} });
      const [row] = await check<{ count: number }[]>`select count(*)::int as count from schema_migrations`;
      await check.end();
      expect(row!.count).toBeGreaterThan(10);
    } finally {
      await fresh.drop();
    }
  }, 60_000);

  test("an unknown command stops with its name and exit code 1", async () => {
    const child = Bun.spawn([process.execPath, "src/main.ts", "migrat"], { env: { ...process.env, DATABASE_URL: database.url }, stdout: "pipe", stderr: "pipe" });
    const errors = await new Response(child.stderr).text();
    expect(await child.exited).toBe(1);
    expect(errors).toContain('unknown command "migrat"');
  });
});
