import { log } from "../observability/log";

/** postgres.js's own codes for a lost connection. */
const DRIVER_CONNECTION_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT"]);

/**
 * The socket errors beneath them, as node:net reports them (with the failing syscall).
 * A fetch to an upstream fails with the same codes but no syscall, so a forgotten
 * upstream promise is not mistaken for the database.
 */
const SOCKET_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNREFUSED", "ETIMEDOUT"]);

/**
 * A database connection went away under the driver: the socket errors, postgres.js's
 * connection errors, and PostgreSQL's own "connection exception" (SQLSTATE class 08) and
 * the connection-ending "operator intervention" codes (57P01–57P03 and 57P05: terminated
 * by an administrator, a crash, a shutdown or an idle timeout; not 57014, a cancelled
 * query), and any error of severity FATAL (PostgreSQL closes the connection after one) —
 * plus the driver's TypeError when it writes to a socket it has already dropped
 * (porsager/postgres#1066, #1154, #1208).
 */
export function isDatabaseConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (DRIVER_CONNECTION_CODES.has(code)) return true;
    if (SOCKET_CODES.has(code) && typeof (error as { syscall?: unknown }).syscall === "string") return true;
    if (error.name === "PostgresError" && /^(08...|57P0[1235])$/.test(code)) return true;
    // A FATAL error ends its connection whatever its code: the start-up refused (55000: the
    // database does not take connections now; 53300: too many; 3D000: it is gone).
    if (error.name === "PostgresError" && /^(FATAL|PANIC)$/.test(String((error as { severity?: unknown }).severity))) return true;
  }
  return error instanceof TypeError && /socket\.write|reading 'write'/.test(error.message) && /postgres[\\/]src[\\/]connection\.js/.test(error.stack ?? "");
}

/**
 * postgres.js 3.4 lets some of these escape where no caller can catch them when a
 * backend dies mid-transaction or during a connection's start-up (a failover, a restart,
 * `pg_terminate_backend`): a write from a timer after the driver dropped the socket, a
 * socket error after it removed its listeners, the type query every new connection runs
 * (a promise nobody awaits). Any of them would end the process, and with it every
 * buffered metering row. The queries that our code awaits fail on their own, and the
 * write buffer retries them; so here these are logged and dropped.
 *
 * Anything else uncaught is logged and ends the process with status 1, as it would
 * without a handler. Installed by main.ts only: a test runner keeps its own handlers.
 */
export function installConnectionLossGuard(exit: (code: number) => void = (code) => process.exit(code)): () => void {
  const onUncaught = (kind: "exception" | "rejection") => (error: unknown) => {
    if (isDatabaseConnectionLoss(error)) {
      log.warn("database connection lost; the driver's stray error was dropped", { kind, error: String(error) });
      return;
    }
    log.error(`uncaught ${kind}`, { error: error instanceof Error ? (error.stack ?? String(error)) : String(error) });
    exit(1);
  };
  const onException = onUncaught("exception");
  const onRejection = onUncaught("rejection");
  process.on("uncaughtException", onException);
  process.on("unhandledRejection", onRejection);
  return () => {
    process.off("uncaughtException", onException);
    process.off("unhandledRejection", onRejection);
  };
}
