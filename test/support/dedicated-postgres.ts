import { spawnSync } from "node:child_process";
import { appendFileSync, chmodSync, mkdtempSync, rmSync } from "node:fs";
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
 *
 * `startStandby(pg)` makes a streaming replica of a cluster started with
 * `{ replication: true }` (test/db/read-replica.test.ts).
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

function serverBin(): string {
  const bin = process.env.TEST_PG_BIN;
  if (!bin) throw new Error("TEST_PG_BIN is not set: run the suite with `npm test` (test/run-tests.ts)");
  return bin;
}

/** A fresh folder PostgreSQL's user may write into (as root, PostgreSQL runs as `postgres`). */
function clusterFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o777);
  if (asRoot) spawnSync("chown", ["-R", "postgres", dir]);
  return dir;
}

export interface DedicatedPostgresOptions {
  /**
   * Ready to be copied by `startStandby`: WAL with what a standby replays, WAL senders, and
   * a pg_hba entry that lets loopback connections stream it (initdb's default has one with
   * `--auth=trust`; written out so the test does not rest on a default).
   */
  replication?: boolean;
}

export async function startDedicatedPostgres(options: DedicatedPostgresOptions = {}): Promise<DedicatedPostgres> {
  const bin = serverBin();
  const dir = clusterFolder("switchyard-pg-own-");
  const dataDir = join(dir, "data");
  run(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  if (options.replication) appendFileSync(join(dataDir, "pg_hba.conf"), "\nhost replication postgres 127.0.0.1/32 trust\n");
  const replication = options.replication ? " -c wal_level=replica -c max_wal_senders=4" : "";
  return runCluster(bin, dir, dataDir, replication);
}

/**
 * A hot standby of `primary` (started with `{ replication: true }`): `pg_basebackup -R`
 * copies its files and writes the standby's connection to it, and the copy is started on
 * a port of its own, read-only, replaying the primary's WAL as it streams in.
 */
export async function startStandby(primary: DedicatedPostgres): Promise<DedicatedPostgres> {
  const bin = serverBin();
  const dir = clusterFolder("switchyard-pg-standby-");
  const dataDir = join(dir, "data");
  const source = new URL(primary.url);
  run(join(bin, "pg_basebackup"), ["-h", source.hostname, "-p", source.port, "-U", "postgres", "-D", dataDir, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync"]);
  return runCluster(bin, dir, dataDir, " -c hot_standby=on");
}

/** Starts the cluster in `dataDir` on a free loopback port; `destroy` stops it and deletes `dir`. */
async function runCluster(bin: string, dir: string, dataDir: string, settings: string): Promise<DedicatedPostgres> {
  let port = 0;
  let running = false;
  // Durable, unlike the runner's cluster: a restart must keep every committed row.
  const start = () => {
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100${settings}`;
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
