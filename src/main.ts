import { startServer } from "./server";
import { loadConfig } from "./config";
import { installConnectionLossGuard } from "./db/connection-loss-guard";
import { serverProcessNumber, superviseServerProcesses } from "./server-processes";
import { log, setLogLevel } from "./observability/log";
import { startTracing } from "./observability/tracing";
import type { RequestTracing } from "./observability/request-trace";
import { connectDatabase } from "./db/connect-database";
import { migrate } from "./db/migrate";

/** Startup errors (a bad PROVIDERS_FILE entry, an unreachable database) end the process with their own words. */
function cannotStart(error: unknown): never {
  process.stderr.write(`switchyard: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
  setLogLevel(config.logLevel);
} catch (error) {
  cannotStart(error);
}

// `bun src/main.ts migrate`: apply the pending migrations (under the same advisory lock
// as a starting server) and exit, as a deployment's one-shot migration step (docs/operations.md "Migrations").
if (process.argv[2] === "migrate") {
  try {
    const db = await connectDatabase(config);
    try {
      const applied = await migrate(db.sql);
      log.info("migrations up to date", { applied });
    } finally {
      await db.close();
    }
  } catch (error) {
    cannotStart(error);
  }
  process.exit(0);
}
if (process.argv[2] !== undefined) cannotStart(new Error(`unknown command "${process.argv[2]}"; the only one is "migrate"`));

const processes = config.serverProcesses;

if (processes > 1 && serverProcessNumber() === undefined) {
  // The primary: it only runs the server processes (src/server-processes.ts).
  process.exit(await superviseServerProcesses(processes));
}

installConnectionLossGuard();

let server: Awaited<ReturnType<typeof startServer>>;
let tracing: RequestTracing;
try {
  tracing = await startTracing(process.env);
  server = await startServer({}, { tracing });
} catch (error) {
  cannotStart(error);
}
if ((serverProcessNumber() ?? 1) === 1) log.info("console", { url: `${server.services.config.publicUrl}/console` });

// A server process stops on the primary's SIGTERM; a terminal's Ctrl-C (SIGINT to the
// whole process group) reaches the primary, which passes it on as that SIGTERM.
const signals = serverProcessNumber() === undefined ? (["SIGTERM", "SIGINT"] as const) : (["SIGTERM"] as const);
if (serverProcessNumber() !== undefined) process.on("SIGINT", () => {});
let received = 0;
for (const signal of signals) {
  process.on(signal, () => {
    received++;
    if (received > 1) process.exit(1); // a second signal means "now"
    log.info("shutting down", { signal });
    // The spans of requests that ended while draining are exported last (bounded: otel-tracing.ts).
    server.shutdown({ delayMs: server.services.config.shutdownDelayMs }).then(() => tracing.shutdown()).then(
      () => process.exit(0),
      (error) => {
        log.error("shutdown failed", { error: String(error) });
        process.exit(1);
      },
    );
  });
}
