import { afterAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/**
 * `npm test` interrupted: the runner (test/run-tests.ts) stops the test process and
 * removes the containers its tests started, which their afterAll never got to remove, and
 * the volumes and networks named after its run; a later run removes those of a runner that
 * died without cleaning up (SIGKILL), and leaves another run's alone. `docker` here is a
 * stand-in that keeps its containers, volumes and networks in a file.
 */
const ROOT = resolve(import.meta.dir, "..");
const folder = mkdtempSync(join(tmpdir(), "switchyard-interrupted-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("SIGTERM to the runner ends the test process and removes its containers; a dead runner's are removed at the next start, a live one's kept", async () => {
  const bin = join(folder, "bin");
  rmSync(bin, { recursive: true, force: true });
  mkdirSync(bin);
  copyFileSync(join(ROOT, "test/fixtures/interrupted-run/fake-docker.sh"), join(bin, "docker"));
  chmodSync(join(bin, "docker"), 0o755);
  const state = join(folder, "containers");
  const log = join(folder, "docker.log");
  // Left by a runner that is gone (no such pid), and by one still running (this process).
  const deadPid = 4_000_000;
  expect(alive(deadPid)).toBe(false);
  writeFileSync(
    state,
    [
      `switchyard-test-${deadPid}-image switchyard.test.runner=${deadPid}`,
      `switchyard-test-${process.pid}-image switchyard.test.runner=${process.pid}`,
      `volume switchyard-test-${deadPid}-compose_postgres-data`,
      `network switchyard-test-${deadPid}-compose_default`,
      `volume switchyard-test-${process.pid}-compose_postgres-data`,
      `network switchyard-test-${process.pid}-compose_default`,
      "volume someone-elses-data",
    ].join("\n") + "\n",
  );
  writeFileSync(log, "");

  const runner = spawn(process.execPath, ["test/run-tests.ts", "./test/fixtures/interrupted-run/sleeping-container.fixture.ts"], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_DOCKER_STATE: state, FAKE_DOCKER_LOG: log, LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  for (const stream of [runner.stdout!, runner.stderr!]) stream.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => runner.once("exit", (code) => done(code)));
  const deadline = Date.now() + 60_000;
  while (!/started (switchyard-test-\d+-probe)/.test(output)) {
    if (Date.now() > deadline) throw new Error(`the fixture never started its container:\n${output}`);
    await Bun.sleep(100);
  }
  const probe = /started (switchyard-test-\d+-probe)/.exec(output)![1]!;
  expect(probe).toBe(`switchyard-test-${runner.pid}-probe`);
  // The dead runner's container, volume and network went at the start; the live one's stay.
  const atStart = readFileSync(state, "utf8");
  expect(atStart).not.toContain(`switchyard-test-${deadPid}-`);
  expect(atStart).toContain(`volume switchyard-test-${process.pid}-compose_postgres-data`);
  expect(atStart).toContain(`network switchyard-test-${process.pid}-compose_default`);
  const testProcesses = () =>
    Bun.spawnSync(["pgrep", "-f", "sleeping-container.fixture"]).stdout.toString().split("\n").filter(Boolean).map(Number).filter((pid) => pid !== runner.pid);
  expect(testProcesses().length).toBeGreaterThan(0);

  runner.kill("SIGTERM");
  expect(await exited).toBe(130);
  const left = readFileSync(state, "utf8");
  expect(left).not.toContain(probe);
  expect(left).toContain(`switchyard-test-${process.pid}-image`);
  expect(left).toContain(`volume switchyard-test-${process.pid}-compose_postgres-data`);
  expect(left).toContain(`network switchyard-test-${process.pid}-compose_default`);
  expect(left).toContain("volume someone-elses-data");
  expect(readFileSync(log, "utf8")).toContain(`rm --force --volumes ${probe}`);
  await Bun.sleep(500);
  expect(testProcesses()).toEqual([]);
}, 120_000);
