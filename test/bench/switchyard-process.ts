/**
 * Switchyard as an operator runs it (`bun src/main.ts`, a child process) on a throwaway
 * PostgreSQL cluster started the way test/run-tests.ts does it, or on the embedded
 * database in a temp DATA_DIR when no PostgreSQL binaries are installed (the bench never
 * installs packages). The inference hot path reads the database only to resolve a
 * credential, which is cached, so either is fine for latency; the real server keeps
 * PGlite out of Switchyard's RSS.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { catalogFor, mockProviderEnv, type MockUpstream } from "../support/mock-upstreams";
import { firstLineWithin, freePort, onCleanup, spawnChild, waitForPing, type Child } from "./children";

const REPO_ROOT = resolve(import.meta.dir, "../..");
const ADMIN_TOKEN = "bench-admin-token";

/** A directory removed at exit. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

function run(command: string, args: string[], asPostgres = false): void {
  const [cmd, argv] = asPostgres && isRoot() ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  const result = spawnSync(cmd, argv, { stdio: "pipe", encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.status}): ${result.stderr}${result.stdout}`);
}

function findPostgresBin(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((version) => existsSync(join(base, version, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], "bin");
}

/**
 * The mock's model suffix for a stream as providers send one: 100 words, a frame each, 1 ms
 * apart (scenario-from-model.ts). The bench's default answer comes whole in one chunk, so
 * nothing in it is per chunk.
 */
export const PACED_STREAM_SUFFIX = "paced100";

export interface Database {
  kind: string;
  /** A fresh database URL for one Switchyard, or undefined for the embedded database. */
  create(name: string): Promise<string | undefined>;
  /** The cluster's postmaster pid (its backends are its children), for CPU by process; absent for the embedded database. */
  postmasterPid?: number;
  /** The cluster's `postgres` database, as its superuser; absent for the embedded database. */
  adminUrl?: string;
}

/** A private PostgreSQL cluster on a free loopback port, stopped and deleted at exit. */
export async function startDatabase(): Promise<Database> {
  const bin = findPostgresBin();
  if (bin === undefined) return { kind: "embedded PGlite (no PostgreSQL binaries found)", create: async () => undefined };
  const dir = tempDir("switchyard-bench-pg-");
  chmodSync(dir, 0o777);
  if (isRoot()) run("chown", ["-R", "postgres", dir]);
  const dataDir = join(dir, "data");
  const port = await freePort();
  run(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"], true);
  // PG_STATEMENTS=1: pg_stat_statements loaded, so a bench can say which statements PostgreSQL's CPU goes to (pg-statements.ts).
  const statements = process.env.PG_STATEMENTS === "1" ? " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on" : "";
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off${statements}`;
  // Registered before the start so that a start that half-succeeds is stopped too (cleanups run last-in first-out, before the rm).
  onCleanup(() => run(join(bin, "pg_ctl"), ["-D", dataDir, "-m", "immediate", "stop"], true));
  run(join(bin, "pg_ctl"), ["-D", dataDir, "-o", options, "-l", join(dir, "server.log"), "-w", "start"], true);
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const version = bin.split("/").at(-2) ?? "?";
  const postmasterPid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  return {
    kind: `PostgreSQL ${version} (throwaway cluster, fsync off)`,
    postmasterPid,
    adminUrl,
    async create(name) {
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`create database ${name}`);
      } finally {
        await admin.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
  };
}

export interface SwitchyardProcess {
  mode: string;
  url: string;
  pid: number;
  apiKey: string;
  /** One key per account created (startSwitchyard's `accounts`), `apiKey` first. */
  apiKeys: string[];
  /** Its database's name in the bench cluster (absent on the embedded database). */
  databaseName?: string;
  /** Resident set size in KiB from /proc/<pid>/status: current (VmRSS) and peak (VmHWM). */
  memoryKb(): { rss: number; peak: number };
  /** SIGTERM, then SIGKILL if it has not exited within 5 s. */
  stop(): Promise<void>;
  output(): string;
}

/** A field of /proc/<pid>/status in kB; NaN once the process is gone. */
function statusField(pid: number, field: string): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return Number.NaN;
  }
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  return match?.[1] === undefined ? Number.NaN : Number(match[1]);
}

export async function startSwitchyard(options: {
  /** A label for the variant, e.g. "auto" or "auto, metering off". */
  mode: string;
  /** Environment for this variant (TRANSLATION_MODE, METERING, …; SWITCHYARD_ROOT: run another checkout). */
  env: Record<string, string>;
  database: Database;
  mocks: Pick<MockUpstream, "protocol" | "baseUrl">[];
  mockKey: string;
  /** Extra `bun` flags before the script, e.g. ["--cpu-prof"] for a profile. */
  bunFlags?: string[];
  /** Accounts to create, each with its API key (`apiKeys`; `apiKey` is the first). Default 1. */
  accounts?: number;
}): Promise<SwitchyardProcess> {
  const key = options.mode.replace(/[^a-z0-9]+/gi, "_").toLowerCase();
  const dir = tempDir(`switchyard-bench-${key}-`);
  const providersFile = join(dir, "providers.json");
  // catalogFor only reads protocol and baseUrl of each mock. Of its "@scenario" models, only the long stream.
  writeFileSync(providersFile, JSON.stringify(catalogFor(options.mocks as MockUpstream[], { scenarioSuffixes: [PACED_STREAM_SUFFIX] })));
  const databaseUrl = await options.database.create(`bench_${key}`);
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...mockProviderEnv(options.mockKey),
    HOST: "127.0.0.1",
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    DATA_DIR: join(dir, "data"),
    PROVIDERS_FILE: providersFile,
    ADMIN_TOKEN,
    LOG_LEVEL: "warn",
    ...options.env,
    SHUTDOWN_GRACE_MS: "2000",
  };
  const child: Child = spawnChild(`switchyard (${options.mode})`, [process.execPath, ...(options.bunFlags ?? []), "src/main.ts"], { env, cwd: options.env.SWITCHYARD_ROOT ?? REPO_ROOT });
  const url = `http://127.0.0.1:${port}`;
  await waitForPing(url, child, 60_000);

  const apiKeys: string[] = [];
  for (let index = 0; index < Math.max(1, options.accounts ?? 1); index++) {
    const created = await fetch(`${url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ email: `bench-${key}${index === 0 ? "" : `-${index}`}@example.test`, credit_micro_usd: 1_000_000_000_000 }),
    });
    const body: unknown = await created.json().catch(() => undefined);
    const apiKey = typeof body === "object" && body !== null && "api_key" in body && typeof body.api_key === "string" ? body.api_key : undefined;
    if (created.status !== 200 || apiKey === undefined) throw new Error(`POST /admin/accounts answered ${created.status}: ${JSON.stringify(body)}`);
    apiKeys.push(apiKey);
  }
  const apiKey = apiKeys[0]!;

  const pid = child.process.pid;
  // Sampled too, so that a process that dies mid-run still reports the peak it reached.
  let lastPeak = Number.NaN;
  const sampler = setInterval(() => {
    const peak = statusField(pid, "VmHWM");
    if (Number.isFinite(peak)) lastPeak = peak;
  }, 500);
  sampler.unref();
  return {
    mode: options.mode,
    url,
    pid,
    apiKey,
    apiKeys,
    ...(databaseUrl === undefined ? {} : { databaseName: `bench_${key}` }),
    memoryKb: () => {
      const peak = statusField(pid, "VmHWM");
      if (Number.isFinite(peak)) lastPeak = peak;
      return { rss: statusField(pid, "VmRSS"), peak: lastPeak };
    },
    async stop() {
      clearInterval(sampler);
      if (child.process.exitCode !== null) return;
      child.process.kill("SIGTERM");
      const exited = await Promise.race([child.process.exited.then(() => true), Bun.sleep(5_000).then(() => false)]);
      if (!exited) child.kill();
    },
    output: child.output,
  };
}

/** `VARIANTS` of the bench scripts: `label:{json env}` pairs separated by ";". */
export function parseVariants(spec: string): Array<{ mode: string; env: Record<string, string> }> {
  return spec.split(";").filter(Boolean).map((part) => {
    const colon = part.indexOf(":");
    if (colon <= 0) throw new Error(`VARIANTS entry "${part}" is not label:{json env}`);
    return { mode: part.slice(0, colon), env: JSON.parse(part.slice(colon + 1)) as Record<string, string> };
  });
}

/** The upstream side of a bench run: the mock upstreams (one child) and the bare proxy in front of the openai-chat one (`proxy`: extra `bun` flags and environment for it). */
export interface BenchUpstreams {
  mockChild: Child;
  proxyChild: Child;
  /** The proxy's origin. */
  proxyUrl: string;
  /** The mocks' base URLs, as startSwitchyard takes them. */
  mocks: Array<{ protocol: "openai-chat" | "anthropic-messages"; baseUrl: string }>;
}

/** Starts test/bench/start-mock.ts and test/bench/bare-proxy.ts (each a child, ended by cleanupAll) and waits until both answer. */
export async function startBenchUpstreams(mockKey: string, proxy: { bunFlags?: string[]; env?: Record<string, string> } = {}): Promise<BenchUpstreams> {
  const here = import.meta.dir;
  const mockChild = spawnChild("mock upstreams", [process.execPath, join(here, "start-mock.ts"), mockKey]);
  const mockUrls = JSON.parse(await firstLineWithin(mockChild, 30_000)) as Record<string, string>;
  const openai = mockUrls["openai-chat"];
  const anthropic = mockUrls["anthropic-messages"];
  if (openai === undefined || anthropic === undefined) throw new Error(`mock child printed ${JSON.stringify(mockUrls)}`);
  const proxyChild = spawnChild("bare proxy", [process.execPath, ...(proxy.bunFlags ?? []), join(here, "bare-proxy.ts"), openai], { env: { ...process.env, ...proxy.env } });
  const proxyUrl = await firstLineWithin(proxyChild, 30_000);
  await waitForPing(proxyUrl, proxyChild, 30_000);
  return {
    mockChild,
    proxyChild,
    proxyUrl,
    mocks: [
      { protocol: "openai-chat", baseUrl: openai },
      { protocol: "anthropic-messages", baseUrl: anthropic },
    ],
  };
}
