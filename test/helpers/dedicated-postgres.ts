import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./spawn-server";

/**
 * A PostgreSQL cluster of a test's own, for a test that stops and starts its database
 * under load (the runner's cluster is shared by every test file). The server binaries are
 * the ones test/run-tests.ts found (TEST_PG_BIN); as root, PostgreSQL runs as `postgres`.
 *
 *   const pg = await startDedicatedPostgres();
 *   pg.stop(); pg.start();        // same port, same data: an outage and a recovery
 *   pg.destroy();
 */
export interface DedicatedPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  /** `pg_ctl stop -m fast`: every connection is closed, the port refuses until `start`. */
  stop(): void;
  /** `pg_ctl start -w` on the same data directory and port. */
  start(): void;
  /** Stops the cluster (immediately) and deletes its folder. */
  destroy(): void;
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

function run(command: string, args: string[]): void {
  const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  const result = spawnSync(cmd, argv, { stdio: "pipe", encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.status}): ${result.stderr}${result.stdout}`);
}

export async function startDedicatedPostgres(): Promise<DedicatedPostgres> {
  const bin = process.env.TEST_PG_BIN;
  if (!bin) throw new Error("TEST_PG_BIN is not set: run the suite with `npm test` (test/run-tests.ts)");
  const dir = mkdtempSync(join(tmpdir(), "switchyard-pg-own-"));
  chmodSync(dir, 0o777);
  const dataDir = join(dir, "data");
  if (asRoot) spawnSync("chown", ["-R", "postgres", dir]);
  run(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  let port = 0;
  let running = false;
  // Durable, unlike the runner's cluster: a restart must keep every committed row.
  const start = () => {
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100`;
    run(join(bin, "pg_ctl"), ["-D", dataDir, "-o", options, "-l", join(dir, "server.log"), "-w", "start"]);
    running = true;
  };
  const stop = (mode = "fast") => {
    run(join(bin, "pg_ctl"), ["-D", dataDir, "-m", mode, "-w", "stop"]);
    running = false;
  };
  // A port found free may be taken before PostgreSQL binds it: then another port (restarts
  // keep the one that worked).
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      start();
      break;
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => stop(),
    start,
    destroy() {
      try {
        if (running) stop("immediate");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
