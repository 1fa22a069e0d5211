import { startServer } from "./server";
import { loadConfig } from "./config";
import { installConnectionLossGuard } from "./db/connection-loss-guard";
import { serverProcessNumber, superviseServerProcesses } from "./server-processes";
import { log, setLogLevel } from "./observability/log";

/** Startup errors (a bad PROVIDERS_FILE entry, an unreachable database) end the process with their own words. */
function cannotStart(error: unknown): never {
  process.stderr.write(`switchyard: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

let processes: number;
try {
  const config = loadConfig();
  setLogLevel(config.logLevel);
  processes = config.serverProcesses;
} catch (error) {
  cannotStart(error);
}

if (processes > 1 && serverProcessNumber() === undefined) {
  // The primary: it only runs the server processes (src/server-processes.ts).
  process.exit(await superviseServerProcesses(processes));
}

installConnectionLossGuard();

let server: Awaited<ReturnType<typeof startServer>>;
try {
  server = await startServer();
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
    server.shutdown().then(
      () => process.exit(0),
      (error) => {
        log.error("shutdown failed", { error: String(error) });
        process.exit(1);
      },
    );
  });
}
