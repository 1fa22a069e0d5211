import postgres from "postgres";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Config } from "../config";
import { log } from "../observability/log";
import { makeDataDirPrivate } from "./private-data-dir";
import { markAsReadPoolError } from "./errors";

export type Sql = postgres.Sql<{ bigint: number }>;

export interface Database {
  /**
   * The primary pool: admission, wallets, settlement, policy counters and leases, metering
   * writes, credentials, migrations, and every read that must see a write just made
   * (a key listed after it is minted, a settlement receipt). No statement timeout: nothing
   * on it is cut short mid-transaction.
   */
  sql: Sql;
  /**
   * The read pool: request history, usage aggregates and daily series, the console's
   * overview and CSV export, the public statistics. Smaller, and each statement is stopped
   * after READ_STATEMENT_TIMEOUT_MS, so however many reads a tenant sends, the primary pool
   * stays free for money and admission (docs/operations.md "Two pools: reads apart from
   * money"). With DATABASE_READ_URL it connects to that replica instead, so what it serves
   * may lag the primary (docs/operations.md "A read replica"). On the embedded database,
   * which takes one connection, it is the primary pool itself.
   */
  read: Sql;
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

/**
 * Where the read pool connects: DATABASE_READ_URL, a streaming replica, when set; else
 * DATABASE_URL. Only reads that tolerate the replica's lag are on that pool; what must see
 * its own writes (settlement receipts, admission, wallets, credentials, key lists) is on
 * the primary pool whatever this says (docs/operations.md "A read replica").
 */
function readDatabaseUrl(config: Pick<Config, "databaseUrl" | "databaseReadUrl">): string | undefined {
  return config.databaseReadUrl ?? config.databaseUrl;
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
 * The read pool's options: its own size, and a `statement_timeout` sent in each
 * connection's startup message, so it holds for every statement on those connections and
 * for none on the primary pool's. `application_name` tells the two apart in
 * pg_stat_activity.
 */
function readClientOptions(config: Pick<Config, "databaseReadPoolSize" | "readStatementTimeoutMs">) {
  return {
    ...clientOptions(config.databaseReadPoolSize),
    // Not fetched under the timeout: shareArrayTypes gives the pool the primary's.
    fetch_types: false,
    connection: {
      application_name: "switchyard-read",
      ...(config.readStatementTimeoutMs > 0 ? { statement_timeout: config.readStatementTimeoutMs } : {}),
    },
  };
}

/**
 * The read pool with each statement's error marked as the read pool's (isReadPoolError in
 * errors.ts), so that the answer can tell a replica's conflict with recovery from the same
 * SQLSTATE anywhere else. Only `unsafe` is wrapped: every read goes through it
 * (src/db/queries/run-query.ts), and each caller only awaits it.
 */
export function markingReadPoolErrors(sql: Sql): Sql {
  const marked = (error: unknown) => {
    markAsReadPoolError(error);
    throw error;
  };
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property !== "unsafe") return Reflect.get(target, property, receiver) as unknown;
      // The function the pool has now, taken once: a caller that wraps `unsafe` (a test's
      // statement counter) sets its wrapper on the pool, and the wrapper calls the function
      // it read here, not this getter again (which looked `unsafe` up at each call and so
      // called the wrapper back, without end).
      const unsafe = Reflect.get(target, property, receiver) as Sql["unsafe"];
      return (...args: Parameters<Sql["unsafe"]>) => unsafe.apply(target, args).catch(marked);
    },
  });
}

/**
 * Gives the read pool the array types (text[], int8[], …) the primary pool fetched from
 * PostgreSQL's catalog when its first connection opened. postgres.js runs that catalog
 * query on every new connection, and on the read pool it would run under the statement
 * timeout: stopped there (a database slow enough), its error escapes where no caller can
 * catch it, and the arrays of that pool would arrive as unparsed text. Every pool on one
 * database has the same types, and so does a streaming replica (a copy of the primary's
 * files, catalog included), so the read pool takes the primary's instead.
 */
async function shareArrayTypes(from: Sql, to: Sql): Promise<void> {
  // The first query opens a connection, which fetches the types before it runs.
  await from`select 1`;
  for (const [oid, parse] of Object.entries(from.options.parsers)) to.options.parsers[Number(oid)] ??= parse;
  for (const [oid, serialize] of Object.entries(from.options.serializers)) to.options.serializers[Number(oid)] ??= serialize;
  // Which array type holds each element type: used when postgres.js infers an array parameter's type.
  const shared = (pool: Sql) => (pool.options as unknown as { shared: { typeArrayMap: Record<number, number> } }).shared.typeArrayMap;
  Object.assign(shared(to), shared(from));
}

/**
 * Opens the database: the PostgreSQL at DATABASE_URL, or the embedded default —
 * PGlite kept in DATA_DIR, served over a Unix socket inside DATA_DIR so the very same
 * postgres.js code talks to it.
 */
export async function connectDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    const sql = postgres(config.databaseUrl, clientOptions(config.databasePoolSize)) as unknown as Sql;
    const read = markingReadPoolErrors(postgres(readDatabaseUrl(config) ?? config.databaseUrl, readClientOptions(config)) as unknown as Sql);
    await shareArrayTypes(sql, read);
    if (config.databaseReadUrl) log.info("read pool on a replica", { read_host: hostOf(config.databaseReadUrl) });
    return {
      sql,
      read,
      kind: "postgres",
      close: async () => {
        await Promise.all([sql.end({ timeout: 5 }), read.end({ timeout: 5 })]);
      },
    };
  }
  // loadConfig refuses this already; a Config built elsewhere must not silently read the
  // embedded database while its caller believes reads go to a replica.
  if (config.databaseReadUrl) throw new Error("DATABASE_READ_URL needs DATABASE_URL: the embedded database has no replicas");
  return connectEmbedded(config.dataDir);
}

/** host:port of a URL for the log, never its user or password. */
function hostOf(url: string): string {
  try {
    return new URL(url).host || "(socket)";
  } catch {
    return "(unparsed)";
  }
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
    // One connection is all PGlite takes: reads share it (and have no statement timeout).
    read: sql,
    kind: "embedded",
    async close() {
      await sql.end({ timeout: 5 });
      await server.stop();
      await db.close();
      rmSync(temporary ? folder : socketPath, { recursive: true, force: true });
    },
  };
}
