import postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Config } from "../config";
import { log } from "../observability/log";
import { makeDataDirPrivate } from "./private-data-dir";

export type Sql = postgres.Sql<{ bigint: number }>;

export interface Database {
  sql: Sql;
  /** "postgres" for DATABASE_URL, "embedded" for the PGlite default. */
  kind: "postgres" | "embedded";
  close(): Promise<void>;
}

/**
 * int8 columns hold micro-USD and token counts. They stay far below 2^53 (that is
 * $9 billion), so they are read as JS numbers rather than strings.
 */
const BIGINT_AS_NUMBER = {
  bigint: {
    to: 20,
    from: [20],
    serialize: (value: number) => String(value),
    parse: (value: string) => Number(value),
  },
};

/**
 * Seconds before a pooled connection that failed tries to connect again, after `retries`
 * failures across the pool: 50 ms doubling, at most 1 s. postgres.js's own backoff grows
 * to 20 s, and every query queued on a waiting connection waits with it: after a database
 * restart of 2 s, requests and the readiness probe hung up to 20 s longer (docs/operations.md "Faults").
 * At most 1 s, a database that is back is used again within a second, and an outage costs
 * each connection one refused attempt a second.
 */
export function reconnectDelaySecs(retries: number): number {
  return Math.min(0.05 * 2 ** Math.max(0, retries - 1), 1);
}

function clientOptions(max: number) {
  return {
    max,
    backoff: reconnectDelaySecs,
    types: BIGINT_AS_NUMBER,
    onnotice: () => {},
    // A connection whose backend dies during its start-up hangs until this: it bounds how
    // long a metering flush can be stuck, so it must stay well inside the 10 s that
    // shutdown gives the write buffer.
    connect_timeout: 5,
    idle_timeout: 0,
    // Named queries are prepared once per connection and reused.
    prepare: true,
  };
}

/**
 * Opens the database: the PostgreSQL at DATABASE_URL, or the embedded default —
 * PGlite kept in DATA_DIR, served over a Unix socket inside DATA_DIR so the very same
 * postgres.js code talks to it.
 */
export async function connectDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    const sql = postgres(config.databaseUrl, clientOptions(config.databasePoolSize)) as unknown as Sql;
    return { sql, kind: "postgres", close: () => sql.end({ timeout: 5 }) };
  }
  return connectEmbedded(config.dataDir);
}

/** Linux takes at most 107 bytes for a socket's path (macOS 103). */
const SOCKET_PATH_MAX = 100;

/**
 * Where the embedded database listens: a Unix socket in DATA_DIR, which is 0700, so no other
 * user can reach it (the socket has no password; a loopback TCP port would let any local
 * process in once the gateway's connection is recycled). When DATA_DIR's path is too long
 * for a socket, a fresh 0700 folder under the system's temporary folder takes it instead.
 * postgres.js connects to `<folder>/.s.PGSQL.<port>`.
 */
function socketFolder(dataDir: string): { folder: string; temporary: boolean } {
  const folder = resolve(dataDir);
  if (join(folder, ".s.PGSQL.5432").length <= SOCKET_PATH_MAX) return { folder, temporary: false };
  return { folder: mkdtempSync(join(tmpdir(), "switchyard-db-")), temporary: true };
}

async function connectEmbedded(dataDir: string): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  // Everything the embedded database and the gateway write here is for this user alone.
  process.umask(0o077);
  makeDataDirPrivate(dataDir);
  const directory = resolve(join(dataDir, "pglite"));
  const db = await PGlite.create(directory);
  // A first start lays the cluster out with the modes PGlite's file layer asks for
  // (0666 for files), not the umask's.
  makeDataDirPrivate(dataDir);
  const { folder, temporary } = socketFolder(dataDir);
  const socketPath = join(folder, ".s.PGSQL.5432");
  // Left over from a process that did not stop cleanly; listening would fail on it.
  rmSync(socketPath, { force: true });
  // PGlite is single-session: the socket server takes one connection, and the
  // client pool is sized to match, or postgres.js would wait for a second
  // connection that is never accepted.
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 1 });
  await server.start();
  const sql = postgres({
    host: folder,
    port: 5432,
    database: "postgres",
    username: "postgres",
    ...clientOptions(1),
  }) as unknown as Sql;
  log.info("embedded database ready", { directory });
  return {
    sql,
    kind: "embedded",
    async close() {
      await sql.end({ timeout: 5 });
      await server.stop();
      await db.close();
      rmSync(temporary ? folder : socketPath, { recursive: true, force: true });
    },
  };
}
