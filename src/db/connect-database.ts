import postgres from "postgres";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "../config";
import { log } from "../observability/log";

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
 * PGlite kept in DATA_DIR, served over a loopback socket so the very same
 * postgres.js code talks to it.
 */
export async function connectDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    const sql = postgres(config.databaseUrl, clientOptions(config.databasePoolSize)) as unknown as Sql;
    return { sql, kind: "postgres", close: () => sql.end({ timeout: 5 }) };
  }
  return connectEmbedded(config.dataDir);
}

async function connectEmbedded(dataDir: string): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  const directory = resolve(join(dataDir, "pglite"));
  mkdirSync(directory, { recursive: true });
  const db = await PGlite.create(directory);
  // PGlite is single-session: the socket server takes one connection, and the
  // client pool is sized to match, or postgres.js would wait for a second
  // connection that is never accepted.
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 });
  await server.start();
  const [host, port] = server.getServerConn().split(":");
  const sql = postgres({
    host: host ?? "127.0.0.1",
    port: Number(port),
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
    },
  };
}
