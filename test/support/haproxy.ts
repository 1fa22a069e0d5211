import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "./spawn-server";

/**
 * Debian's HAProxy in front of Switchyard instances on loopback, for tests and scripts that
 * need a real load balancer (test/run-tests.ts installs the `haproxy` package when absent).
 *
 *   const balancer = await startHaproxy([portA, portB]);
 *   await balancer.waitFor("s1", "UP");          // servers are named s1, s2, … in order
 *   await fetch(`${balancer.url}/v1/chat/completions`, …);
 *   await balancer.stop();
 *
 * Each backend is health-checked with `GET /ready` every `checkIntervalMs`, marked down
 * after `fall` failed checks and up after `rise` good ones, as deploy/haproxy.cfg does in
 * production (with a faster interval). By default a request whose connection fails is not
 * tried again, on that server or another (`retries 0`, unlike deploy/haproxy.cfg), so what
 * a test measures is what the instances do, not what HAProxy hides.
 */
export const HAPROXY_BIN = "/usr/sbin/haproxy";

export interface HaproxyOptions {
  /** Health-check interval (`inter`); 200 ms by default. */
  checkIntervalMs?: number;
  /** Failed checks before a server is marked down (`fall`); 2 by default. */
  fall?: number;
  /** Good checks before a server is marked up (`rise`); 2 by default. */
  rise?: number;
  /** Connection attempts tried again after a failed one, on another server (`retries`, `option redispatch`); 0 by default. */
  retries?: number;
}

/** What HAProxy says of a server: "UP", "DOWN", "MAINT", or a transition such as "UP 1/2". */
export type ServerStatus = string;

export interface RunningHaproxy {
  /** `http://127.0.0.1:<port>`: the balancer's front end. */
  url: string;
  /** Each server's status, by name (s1, s2, …), read from HAProxy's stats socket. */
  statuses(): Promise<Record<string, ServerStatus>>;
  /** Resolves once server `name` is `status` ("UP" or "DOWN"); rejects after `timeoutMs`. */
  waitFor(name: string, status: "UP" | "DOWN", timeoutMs?: number): Promise<void>;
  /** HAProxy's own output so far (alerts and warnings; no request logs). */
  output(): string;
  /** Stops HAProxy and removes its folder. */
  stop(): Promise<void>;
}

/** deploy/haproxy-503.http: what the balancer answers when no instance is ready. */
const BALANCER_503_FILE = new URL("../../deploy/haproxy-503.http", import.meta.url).pathname;

/** The configuration for `backendPorts` on 127.0.0.1 behind a front end on `port`. */
export function haproxyConfig(port: number, backendPorts: readonly number[], statsSocket: string, options: HaproxyOptions = {}): string {
  const inter = options.checkIntervalMs ?? 200;
  const servers = backendPorts.map((backend, index) => `  server s${index + 1} 127.0.0.1:${backend} check`);
  return [
    "global",
    `  stats socket ${statsSocket} mode 600 level admin`,
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 60s",
    "  timeout server 60s",
    // A check answered slowly by a busy machine is not a failed one: only a non-200 is.
    "  timeout check 2s",
    `  retries ${options.retries ?? 0}`,
    // The deployment's own 503 page (JSON every SDK reads as an error) when no server is up.
    `  errorfile 503 ${BALANCER_503_FILE}`,
    ...(options.retries ? ["  option redispatch"] : []),
    "frontend switchyard",
    `  bind 127.0.0.1:${port}`,
    "  default_backend instances",
    "backend instances",
    "  balance roundrobin",
    "  option httpchk GET /ready",
    "  http-check expect status 200",
    `  default-server inter ${inter}ms fastinter ${inter}ms downinter ${inter}ms fall ${options.fall ?? 2} rise ${options.rise ?? 2}`,
    ...servers,
    "",
  ].join("\n");
}

/** `haproxy -c -f <file>`: resolves with HAProxy's verdict on a configuration file. */
export async function checkHaproxyConfig(file: string): Promise<{ valid: boolean; output: string }> {
  const child = Bun.spawn([HAPROXY_BIN, "-c", "-f", file], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { valid: code === 0, output: stdout + stderr };
}

/** Runs HAProxy in the foreground in front of `backendPorts`; resolves once its front end accepts connections. */
export async function startHaproxy(backendPorts: readonly number[], options: HaproxyOptions = {}): Promise<RunningHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-haproxy-"));
  const port = await freePort();
  const statsSocket = join(dir, "stats.sock");
  const configFile = join(dir, "haproxy.cfg");
  writeFileSync(configFile, haproxyConfig(port, backendPorts, statsSocket, options));
  const child: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn([HAPROXY_BIN, "-db", "-f", configFile], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let output = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += new TextDecoder().decode(chunk);
  };
  void collect(child.stdout);
  void collect(child.stderr);

  const statuses = async (): Promise<Record<string, ServerStatus>> => {
    const csv = await statsCommand(statsSocket, "show stat\n");
    const lines = csv.split("\n").filter((line) => line !== "");
    const header = lines[0]!.replace(/^# /, "").split(",");
    const [proxy, server, status] = ["pxname", "svname", "status"].map((name) => header.indexOf(name));
    const result: Record<string, ServerStatus> = {};
    for (const line of lines.slice(1)) {
      const fields = line.split(",");
      if (fields[proxy!] === "instances" && fields[server!] !== "BACKEND") result[fields[server!]!] = fields[status!]!;
    }
    return result;
  };

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await child.exited;
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`haproxy exited (${child.exitCode}): ${output}`);
    }
    const accepting = await statuses().then(() => true, () => false);
    if (accepting) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`haproxy did not start within 10 s: ${output}`);
    }
    await Bun.sleep(50);
  }

  return {
    url: `http://127.0.0.1:${port}`,
    statuses,
    async waitFor(name, status, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      let last: ServerStatus | undefined;
      while (Date.now() < until) {
        last = (await statuses())[name];
        if (last === status) return;
        await Bun.sleep(50);
      }
      throw new Error(`haproxy server ${name} is ${last ?? "unknown"}, not ${status}, after ${timeoutMs} ms`);
    },
    output: () => output,
    stop,
  };
}

/** One command on HAProxy's stats socket; resolves with its whole answer. */
function statsCommand(socketPath: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = "";
    socket.on("connect", () => socket.end(command));
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
  });
}
