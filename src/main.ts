import { startServer } from "./server";
import { log } from "./observability/log";

const server = await startServer();

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
