import postgres from "postgres";
import { existsSync, mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Config } from "../config";
import { log } from "../observability/log";
import { makePrivate } from "./private-directory";

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

function clientOptions(max: number) {
  return {
    max,
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
 * postgres.js code talks to it. The embedded server has no authentication of its own,
 * so nothing but this user may reach it: no TCP port, DATA_DIR and its folders 0700,
 * its files 0600, and the process's umask 077 for files made later.
 */
export async function connectDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    const sql = postgres(config.databaseUrl, clientOptions(config.databasePoolSize)) as unknown as Sql;
    return { sql, kind: "postgres", close: () => sql.end({ timeout: 5 }) };
  }
  return connectEmbedded(config.dataDir);
}

/** Longest Unix socket path the kernel takes (108 bytes on Linux, 104 on macOS, with the NUL). */
const MAX_SOCKET_PATH = 100;

/**
 * Where the embedded server listens: `DATA_DIR/run/pglite.sock`, or, when that path is
 * too long for a socket, a fresh 0700 folder under the system's temporary directory.
 */
function socketPath(dataDir: string): { path: string; cleanUp(): void } {
  const inDataDir = join(dataDir, "run", "pglite.sock");
  if (Buffer.byteLength(inDataDir) <= MAX_SOCKET_PATH) {
    makePrivate(join(dataDir, "run"));
    // A socket left by a process that did not stop cleanly.
    if (existsSync(inDataDir)) unlinkSync(inDataDir);
    return { path: inDataDir, cleanUp: () => rmSync(inDataDir, { force: true }) };
  }
  const folder = mkdtempSync(join(tmpdir(), "switchyard-db-"));
  return { path: join(folder, "pglite.sock"), cleanUp: () => rmSync(folder, { recursive: true, force: true }) };
}

async function connectEmbedded(dataDir: string): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  // Files the database (or anything else) makes from now on are private too.
  process.umask(0o077);
  const root = resolve(dataDir);
  makePrivate(root);
  const directory = join(root, "pglite");
  makePrivate(directory);
  const db = await PGlite.create(directory);
  makePrivate(root);
  // PGlite is single-session: the socket server takes one connection, and the
  // client pool is sized to match, or postgres.js would wait for a second
  // connection that is never accepted.
  const socket = socketPath(root);
  const server = new PGLiteSocketServer({ db, path: socket.path, maxConnections: 1 });
  await server.start();
  const sql = postgres({
    path: socket.path,
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
      socket.cleanUp();
    },
  };
}
