/**
 * The whole test suite against a throwaway, real PostgreSQL:
 *   1. find PostgreSQL server binaries (install Debian's `postgresql` if absent) and
 *      Debian's chromium for the browser tests and haproxy for the load-balancer tests
 *      (each installed the same way if absent),
 *   2. initdb + start a private cluster on a free loopback port (as the `postgres`
 *      user when invoked as root: PostgreSQL refuses to run as root),
 *   3. run `bun test` with TEST_DATABASE_URL pointing at it,
 *   4. stop and delete the cluster, and end with one line `N passed, M failed`.
 * Interrupted (SIGINT, SIGTERM), it stops the test process, removes the containers its
 * tests started (test/support/test-containers.ts) and the cluster. A run also removes
 * test containers a runner that no longer exists left behind.
 * Extra arguments go to `bun test` (e.g. a path filter).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, chmodSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./support/spawn-server";
import { findContainerTool, removeTestContainers } from "./support/test-containers";

function sh(command: string, args: string[], options: { asPostgres?: boolean; quiet?: boolean } = {}) {
  const [cmd, argv] = options.asPostgres && isRoot() ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  const result = spawnSync(cmd, argv as string[], { stdio: options.quiet ? "pipe" : "inherit", encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status}): ${result.stderr ?? ""}${result.stdout ?? ""}`);
  }
  return result.stdout ?? "";
}

function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/** apt-get install of one Debian package, as root or through sudo. */
function aptInstall(packageName: string): void {
  const sudo = isRoot() ? [] : ["sudo"];
  const run = (args: string[]) => sh(sudo[0] ?? args[0]!, sudo.length ? args : args.slice(1));
  run(["apt-get", "update", "-q"]);
  run(["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q", "--no-install-recommends", packageName]);
}

function findPostgresBin(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], "bin") : undefined;
}

function ensurePostgres(): string {
  let bin = findPostgresBin();
  if (bin) return bin;
  console.log("PostgreSQL server binaries not found: installing Debian's postgresql package");
  aptInstall("postgresql");
  bin = findPostgresBin();
  if (!bin) throw new Error("postgresql installed, but no server binaries under /usr/lib/postgresql");
  return bin;
}

/**
 * The browser tests drive Debian's chromium (test/support/browser.ts); a fresh machine
 * gets it the way it gets PostgreSQL.
 */
function ensureChromium(): void {
  if (existsSync("/usr/bin/chromium")) return;
  console.log("chromium not found: installing Debian's chromium package");
  aptInstall("chromium");
  if (!existsSync("/usr/bin/chromium")) throw new Error("chromium installed, but /usr/bin/chromium is missing");
}

/** The load-balancer tests run Debian's haproxy (test/support/haproxy.ts), installed the same way. */
function ensureHaproxy(): void {
  if (existsSync("/usr/sbin/haproxy")) return;
  console.log("haproxy not found: installing Debian's haproxy package");
  aptInstall("haproxy");
  if (!existsSync("/usr/sbin/haproxy")) throw new Error("haproxy installed, but /usr/sbin/haproxy is missing");
}


async function main(): Promise<number> {
  const bin = ensurePostgres();
  ensureChromium();
  ensureHaproxy();
  const dir = mkdtempSync(join(tmpdir(), "switchyard-pg-"));
  chmodSync(dir, 0o777);
  const dataDir = join(dir, "data");
  const port = await freePort();
  if (isRoot()) sh("chown", ["-R", "postgres", dir], { quiet: true });
  let started = false;
  let child: ReturnType<typeof spawn> | undefined;
  // Found once: every removal below uses it, and none may wait for a tool that is not there.
  const containerTool = findContainerTool();
  const removed = removeTestContainers("stale", containerTool);
  if (removed.length > 0) console.log(`removed test containers left by an earlier run: ${removed.join(", ")}`);
  const stop = () => {
    // The test process may be gone before its afterAll ran: its containers go here.
    removeTestContainers(process.pid, containerTool);
    if (started) {
      started = false;
      try {
        sh(join(bin, "pg_ctl"), ["-D", dataDir, "-m", "immediate", "stop"], { asPostgres: true, quiet: true });
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      // A SIGTERM sent to this process alone would leave `bun test` running on, orphaned.
      child?.kill("SIGKILL");
      stop();
      process.exit(130);
    });
  }
  try {
    sh(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"], { asPostgres: true, quiet: true });
    // Durability is pointless for a throwaway cluster; speed is not.
    const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`;
    sh(join(bin, "pg_ctl"), ["-D", dataDir, "-o", serverOptions, "-l", join(dir, "server.log"), "-w", "start"], { asPostgres: true, quiet: true });
    started = true;
    // Every temporary file and folder a test makes (catalogs, data folders, browser
    // profiles) goes under the run's own folder, removed with the cluster by stop(): a test
    // that forgets its own, or a run cut short, leaves nothing in /tmp. Mode 1777 like /tmp:
    // the tests run some tools as the postgres user.
    const testTmp = join(dir, "tmp");
    mkdirSync(testTmp);
    chmodSync(testTmp, 0o1777);
    const env = {
      ...process.env,
      TMPDIR: testTmp,
      TEST_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
      TEST_PG_BIN: bin,
      LOG_LEVEL: process.env.LOG_LEVEL ?? "silent",
      // What the tests name and label their containers by (test/support/test-containers.ts).
      SWITCHYARD_TEST_RUNNER_PID: String(process.pid),
    };
    const bunBinary = process.execPath; // the bun running this script
    // The per-test timeout of bunfig.toml, on the command line: bun 1.4.5 does not read the
    // bunfig key and falls back to 5 s, which a test that starts a server or a cluster can
    // exceed on a loaded machine. A later --timeout among the arguments wins.
    child = spawn(bunBinary, ["test", "--timeout", "30000", ...process.argv.slice(2)], { env, stdio: ["ignore", "pipe", "pipe"] });
    const running = child;
    let summary = "";
    const forward = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) =>
      stream.on("data", (chunk: Buffer) => {
        out.write(chunk);
        summary = (summary + chunk.toString()).slice(-4000);
      });
    forward(running.stdout!, process.stdout);
    forward(running.stderr!, process.stderr);
    const code: number = await new Promise((resolve) => running.on("close", (c) => resolve(c ?? 1)));
    const passed = Number(/(\d+) pass\b/.exec(summary)?.[1] ?? 0);
    const failed = Number(/(\d+) fail\b/.exec(summary)?.[1] ?? (code === 0 ? 0 : 1));
    stop();
    console.log(`${passed} passed, ${failed} failed`);
    return code !== 0 || failed > 0 || passed === 0 ? 1 : 0;
  } catch (error) {
    stop();
    console.error(String(error));
    console.log("0 passed, 1 failed");
    return 1;
  }
}

process.exit(await main());
