import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";

/**
 * Containers the tests start, and their removal when a run is interrupted. Every test
 * container is named `switchyard-test-<runner pid>-<what>` and labelled with the runner's
 * pid (test/run-tests.ts passes it down as SWITCHYARD_TEST_RUNNER_PID), so that:
 *
 *   - the runner, on SIGINT or SIGTERM (the test process may die before its afterAll),
 *     and again after a normal end, removes the containers of its own run;
 *   - a run starting removes those left by a runner that no longer exists (killed with
 *     SIGKILL, a lost machine), never another run's still going (several checkouts on one
 *     machine run their suites at once).
 *
 * A compose project named `switchyard-test-<runner pid>-<what>` (test/deploy/compose.test.ts)
 * names its containers, volumes and network after itself: its containers carry the label
 * too, and its volumes and network go with them, by name.
 */
const ROOT = resolve(import.meta.dir, "../..");
export const RUNNER_LABEL = "switchyard.test.runner";
const NAME = /^switchyard-test-(\d+)-/;

export interface ContainerTool {
  name: "docker" | "podman";
  /** The tool and the flags every call needs. */
  command: string[];
  /** Flags for `run` beyond the common ones. */
  runFlags: string[];
  env: Record<string, string | undefined>;
}

function answers(command: string[], env: Record<string, string | undefined> = process.env): boolean {
  try {
    return spawnSync(command[0]!, command.slice(1), { env, stdio: "ignore", timeout: 20_000 }).status === 0;
  } catch {
    return false; // not installed
  }
}

/** The tool scripts/build-image.sh uses: a docker engine that answers, else podman, or why there is none. */
export function findContainerTool(): ContainerTool | string {
  if (answers(["docker", "info"])) return { name: "docker", command: ["docker"], runFlags: ["--read-only"], env: process.env };
  if (!answers(["podman", "--version"])) return "neither a docker engine nor podman is available here (the test runner installs neither; see docs/operations.md \"Image\")";
  const env = { ...process.env, CONTAINERS_CONF: join(ROOT, ".tmp/image/containers.conf") };
  // As scripts/podman-env.sh: runc, and (in run flags) no writable tmpfs beyond DATA_DIR,
  // no healthcheck timer (podman would ask systemd for one; the test runs the check itself).
  return { name: "podman", command: ["podman", "--runtime", "runc"], runFlags: ["--read-only", "--read-only-tmpfs=false", "--health-interval=disable"], env };
}

/** The runner whose run this process belongs to: test/run-tests.ts, or this process when `bun test` runs alone. */
export function runnerPid(): number {
  const fromRunner = Number(process.env.SWITCHYARD_TEST_RUNNER_PID);
  return Number.isInteger(fromRunner) && fromRunner > 0 ? fromRunner : process.pid;
}

/** The name and the `run` flags of a test container: `what` says which test started it. */
export function testContainer(what: string): { name: string; flags: string[] } {
  const pid = runnerPid();
  return { name: `switchyard-test-${pid}-${what}`, flags: ["--label", `${RUNNER_LABEL}=${pid}`] };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function call(tool: ContainerTool, args: string[]): string {
  const result = spawnSync(tool.command[0]!, [...tool.command.slice(1), ...args], { env: tool.env, encoding: "utf8", timeout: 60_000 });
  return result.status === 0 ? result.stdout : "";
}

/** The names `list` prints that belong to runner `which` (or to a runner gone, `"stale"`), and to `what` when given. */
function ownNames(list: string, which: number | "stale", what: string | undefined): string[] {
  return list
    .split("\n")
    .map((line) => line.trim())
    .filter((name) => {
      const owner = NAME.exec(name)?.[1];
      if (owner === undefined) return false;
      if (what !== undefined && !name.startsWith(`switchyard-test-${owner}-${what}`)) return false;
      return which === "stale" ? !alive(Number(owner)) : Number(owner) === which;
    });
}

/**
 * Removes the test containers of runner `pid`, or with `"stale"` those of every runner
 * that no longer exists (only those a test named `what`, when given), with their anonymous
 * volumes, then the volumes and networks named after such a run (a compose project's).
 * Returns the containers' names. Never throws: this runs on the way out.
 */
export function removeTestContainers(which: number | "stale", tool: ContainerTool | string = findContainerTool(), what?: string): string[] {
  if (typeof tool === "string") return [];
  const filter = which === "stale" ? RUNNER_LABEL : `${RUNNER_LABEL}=${which}`;
  const names = ownNames(call(tool, ["ps", "--all", "--filter", `label=${filter}`, "--format", "{{.Names}}"]), which, what);
  for (const name of names) call(tool, ["rm", "--force", "--volumes", name]);
  // Unused once those containers are gone; the names carry the runner's pid, so no other run's is touched.
  for (const volume of ownNames(call(tool, ["volume", "ls", "--format", "{{.Name}}"]), which, what)) call(tool, ["volume", "rm", "--force", volume]);
  for (const network of ownNames(call(tool, ["network", "ls", "--format", "{{.Name}}"]), which, what)) call(tool, ["network", "rm", network]);
  return names;
}
