import { startServer } from "./server";
import { installConnectionLossGuard } from "./db/connection-loss-guard";
import { log } from "./observability/log";

installConnectionLossGuard();

let server: Awaited<ReturnType<typeof startServer>>;
try {
  server = await startServer();
} catch (error) {
  // Startup errors (a bad PROVIDERS_FILE entry, an unreachable database) end the process with their own words.
  process.stderr.write(`switchyard: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

let signals = 0;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    signals++;
    if (signals > 1) process.exit(1); // a second signal means "now"
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
