/**
 * The whole test suite against a throwaway, real PostgreSQL:
 *   1. find PostgreSQL server binaries (install Debian's `postgresql` if absent) and
 *      Debian's chromium for the browser tests and haproxy for the load-balancer tests
 *      (each installed the same way if absent),
 *   2. initdb + start a private cluster on a free loopback port (as the `postgres`
 *      user when invoked as root: PostgreSQL refuses to run as root),
 *   3. run `bun test` with TEST_DATABASE_URL pointing at it: the whole suite as TEST_SHARDS
 *      `bun test` processes side by side (default 2, or 1 on one core), each a share of the
 *      test files, their output printed whole as each ends; with arguments, one process,
 *   4. stop and delete the cluster, and end with one line `N passed, M failed`.
 * Interrupted (SIGINT, SIGTERM), it stops the test process, removes the containers its
 * tests started (test/support/test-containers.ts) and the cluster. A run also removes
 * test containers a runner that no longer exists left behind.
 * Extra arguments go to `bun test` (e.g. a path filter).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, chmodSync, mkdirSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
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
  const children: ReturnType<typeof spawn>[] = [];
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
      for (const child of children) child.kill("SIGKILL");
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
    const args = process.argv.slice(2);
    // Two by default, one a core where there are two: more would only share the same cores.
    const shardCount = Math.max(1, Number(process.env.TEST_SHARDS ?? Math.min(2, availableParallelism())));
    const shards = args.length === 0 ? shardsOf(testFiles(), shardCount) : [args];
    const results = await Promise.all(
      shards.map((files, index) =>
        runBunTest(files, env, shards.length === 1 ? undefined : `shard ${index + 1} of ${shards.length}`, (spawned) => {
          children.push(spawned);
        }),
      ),
    );
    const passed = results.reduce((sum, r) => sum + r.passed, 0);
    const failed = results.reduce((sum, r) => sum + r.failed, 0);
    stop();
    console.log(`${passed} passed, ${failed} failed`);
    return results.some((r) => r.code !== 0) || failed > 0 || passed === 0 ? 1 : 0;
  } catch (error) {
    stop();
    console.error(String(error));
    console.log("0 passed, 1 failed");
    return 1;
  }
}

/** Every test file under test/, relative to the project. */
function testFiles(): string[] {
  const root = join(import.meta.dir, "..");
  return readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".test.ts") && !file.includes("node_modules"))
    .map((file) => join("test", file))
    .sort();
}

/**
 * The files split into `count` lists of about equal weight, by size on disk (what a file
 * holds is roughly what it runs), the heaviest first into the lightest list.
 */
function shardsOf(files: readonly string[], count: number): string[][] {
  const root = join(import.meta.dir, "..");
  const weighted = files.map((file) => ({ file, weight: statSync(join(root, file)).size })).sort((a, b) => b.weight - a.weight || a.file.localeCompare(b.file));
  const shards = Array.from({ length: Math.min(count, files.length) }, () => ({ files: [] as string[], weight: 0 }));
  for (const { file, weight } of weighted) {
    const lightest = shards.reduce((min, shard) => (shard.weight < min.weight ? shard : min));
    lightest.files.push(file);
    lightest.weight += weight;
  }
  return shards.map((shard) => shard.files.sort());
}

/**
 * One `bun test` process over `files`. Alone (no `label`) its output streams through; beside
 * others it is kept and printed whole when it ends, under its label, so the shards' lines
 * never interleave.
 */
async function runBunTest(files: readonly string[], env: NodeJS.ProcessEnv, label: string | undefined, started: (child: ReturnType<typeof spawn>) => void): Promise<{ code: number; passed: number; failed: number }> {
  // The per-test timeout of bunfig.toml, on the command line: bun 1.4.5 does not read the
  // bunfig key and falls back to 5 s, which a test that starts a server or a cluster can
  // exceed on a loaded machine. A later --timeout among the arguments wins.
  const child = spawn(process.execPath, ["test", "--timeout", "30000", ...files], { env, stdio: ["ignore", "pipe", "pipe"] });
  started(child);
  let summary = "";
  const kept: Buffer[] = [];
  const forward = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) =>
    stream.on("data", (chunk: Buffer) => {
      if (label === undefined) out.write(chunk);
      else kept.push(chunk);
      summary = (summary + chunk.toString()).slice(-4000);
    });
  forward(child.stdout!, process.stdout);
  forward(child.stderr!, process.stderr);
  const code: number = await new Promise((resolve) => child.on("close", (c) => resolve(c ?? 1)));
  if (label !== undefined) {
    process.stdout.write(`\n==== ${label}: ${files.length} files ====\n`);
    process.stdout.write(Buffer.concat(kept));
  }
  return {
    code,
    passed: Number(/(\d+) pass\b/.exec(summary)?.[1] ?? 0),
    failed: Number(/(\d+) fail\b/.exec(summary)?.[1] ?? (code === 0 ? 0 : 1)),
  };
}

process.exit(await main());
