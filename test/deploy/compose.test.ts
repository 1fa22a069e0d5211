/**
 * deploy/compose.yaml run whole (docs/operations.md "Deployment"): `npm run compose -- up -d`
 * (scripts/compose.sh) builds the server's image and PostgreSQL's and HAProxy's from Debian
 * packages, or reuses them, and starts PostgreSQL, the migration, two instances and
 * HAProxy, with the stand-in upstream laid over it (compose-stand-in/). Then, through
 * HAProxy only: operator and management calls, a chat completion answered by the stand-in,
 * its record in the history, and a request still served with one instance stopped.
 *
 * Opt in with COMPOSE_TEST=1: it takes about two minutes with the images built, up to
 * twenty more to build them, too slow for every run of the suite. It needs a docker
 * engine with `docker compose`, or podman with Debian's podman-compose (as image.test.ts,
 * the test runner installs neither); otherwise it is skipped with the reason printed.
 * The project is named after the test runner (`switchyard-test-<pid>-compose`) and its
 * containers labelled with it, so an interrupted run's containers, volumes and network
 * are removed by the runner (test/support/test-containers.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../support/spawn-server";
import { findContainerTool, removeTestContainers, RUNNER_LABEL, runnerPid, testContainer, type ContainerTool } from "../support/test-containers";

const ROOT = resolve(import.meta.dir, "../..");
const STAND_IN = "test/deploy/compose-stand-in/compose.yaml";
const SERVICES = ["postgres", "migrate", "switchyard-1", "switchyard-2", "haproxy", "stand-in"];
/** A first run builds three images (the server's alone took 10 minutes on 2 busy cores). */
const UP_TIMEOUT_MS = 30 * 60_000;

/** Why the test cannot or should not run here, or the container tool it runs with. */
function composeTool(): ContainerTool | string {
  const tool = findContainerTool();
  if (typeof tool === "string") return tool;
  const compose = tool.name === "docker" ? ["docker", "compose", "version"] : ["podman-compose", "--version"];
  const answered = spawnSync(compose[0]!, compose.slice(1), { env: tool.env, stdio: "ignore", timeout: 20_000 });
  if (answered.status !== 0) return `${tool.name} is here but ${compose.slice(0, -1).join(" ")} is not (apt-get install podman-compose)`;
  if (process.env.COMPOSE_TEST !== "1") return "opt in with COMPOSE_TEST=1 (builds three images on a first run, then about two minutes; docs/operations.md \"Deployment\")";
  return tool;
}

const tool = composeTool();
if (typeof tool === "string") console.log(`test/deploy/compose.test.ts skipped: ${tool}`);

describe.skipIf(typeof tool === "string")("deploy/compose.yaml, run", () => {
  const container = tool as ContainerTool;
  const project = testContainer("compose").name;
  const adminToken = `compose-test-${randomBytes(12).toString("hex")}`;
  let folder = "";
  let env: Record<string, string | undefined> = {};
  let balancer = "";

  /** `npm run compose -- <args>` with the test's files and environment. */
  function compose(args: string[], timeoutMs = 120_000) {
    const files = ["-f", STAND_IN, "-f", join(folder, "labels.yaml")];
    const child = Bun.spawnSync(["bash", "scripts/compose.sh", ...files, ...args], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe", timeout: timeoutMs });
    return { code: child.exitCode, output: `${child.stdout.toString()}${child.stderr.toString()}` };
  }

  /** The container of a service of this project, named as the compose tool names it. */
  function containerOf(service: string): string {
    const listed = spawnSync(
      container.command[0]!,
      [...container.command.slice(1), "ps", "--all", "--filter", `label=com.docker.compose.project=${project}`, "--filter", `label=com.docker.compose.service=${service}`, "--format", "{{.Names}}"],
      { env: container.env, encoding: "utf8" },
    );
    const name = listed.stdout.trim().split("\n")[0];
    if (!name) throw new Error(`no container for ${service} in ${project}`);
    return name;
  }

  function exec(service: string, command: string[]) {
    const child = spawnSync(container.command[0]!, [...container.command.slice(1), "exec", containerOf(service), ...command], { env: container.env, encoding: "utf8", timeout: 60_000 });
    return { code: child.status, stdout: child.stdout.trim(), stderr: child.stderr };
  }

  const readyInside = (service: string) => exec(service, ["/usr/local/bin/bun", "-e", "fetch('http://127.0.0.1:8080/ready').then(async (r) => console.log(r.status, await r.text()), () => console.log('refused'))"]).stdout;

  const call = (method: string, path: string, token: string, body?: unknown) =>
    fetch(`${balancer}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "switchyard-compose-"));
    // Every service's container labelled with the runner, as testContainer's flags do.
    const labels = { services: Object.fromEntries(SERVICES.map((service) => [service, { labels: { [RUNNER_LABEL]: String(runnerPid()) } }])) };
    writeFileSync(join(folder, "labels.yaml"), JSON.stringify(labels, null, 2));
    const port = await freePort();
    balancer = `http://127.0.0.1:${port}`;
    env = {
      ...container.env,
      COMPOSE_PROJECT_NAME: project,
      SWITCHYARD_PORT: String(port),
      POSTGRES_PASSWORD: randomBytes(18).toString("base64url"),
      ADMIN_TOKEN: adminToken,
      BYOK_MASTER_KEY: randomBytes(32).toString("base64"),
      MOCK_API_KEY: `stand-in-${randomBytes(8).toString("hex")}`,
    };
    const up = compose(["up", "-d"], UP_TIMEOUT_MS);
    if (up.code !== 0) throw new Error(`npm run compose -- up -d exited ${up.code}: ${up.output.slice(-4000)}`);
    // Both instances ready behind HAProxy: migrated, on the database, checked by the balancer.
    const deadline = Date.now() + 180_000;
    while (!(readyInside("switchyard-1").startsWith("200") && readyInside("switchyard-2").startsWith("200") && (await fetch(`${balancer}/ready`).then((r) => r.ok, () => false)))) {
      if (Date.now() > deadline) throw new Error(`the stack never came up ready:\n${compose(["logs"]).output.slice(-6000)}`);
      await Bun.sleep(1_000);
    }
  }, UP_TIMEOUT_MS + 240_000);

  afterAll(() => {
    // The containers with their anonymous volumes, the database's volume and the network.
    removeTestContainers(runnerPid(), container, "compose");
    if (folder) rmSync(folder, { recursive: true, force: true });
  }, 120_000);

  test("PostgreSQL is Debian's, made by the image's entrypoint with the compose file's user, database and connection limit", () => {
    const version = exec("postgres", ["postgres", "--version"]);
    expect(version.stdout).toMatch(/^postgres \(PostgreSQL\) 15\.\d+ \(Debian 15\./);
    expect(exec("postgres", ["pg_isready", "-U", "switchyard", "-d", "switchyard"]).code).toBe(0);
    const settings = exec("postgres", ["psql", "-U", "switchyard", "-d", "switchyard", "-Atc", "select current_user, current_database(), current_setting('max_connections'), count(*) > 0 from schema_migrations"]);
    expect(settings.stdout).toBe("switchyard|switchyard|100|t");
    // PID 1 is the server itself (SIGINT from a stop reaches it), running as postgres.
    expect(exec("postgres", ["sh", "-c", "cat /proc/1/comm; stat -c %U /proc/1"]).stdout.split("\n")).toEqual(["postgres", "postgres"]);
  });

  test("both instances are ready, each on its own container, and HAProxy answers for them", async () => {
    expect(readyInside("switchyard-1")).toBe('200 {"status":"ready"}');
    expect(readyInside("switchyard-2")).toBe('200 {"status":"ready"}');
    expect(containerOf("switchyard-1")).not.toBe(containerOf("switchyard-2"));
    const ready = await fetch(`${balancer}/ready`);
    expect(ready.status).toBe(200);
  });

  test("through HAProxy: an account and a key from the management APIs, a chat completion answered by the stand-in, its record in the history", async () => {
    const created = await call("POST", "/admin/accounts", adminToken, { email: "compose@example.test", credit_micro_usd: 1_000_000 });
    expect(created.status).toBe(200);
    const account = (await created.json()) as { api_key: string; namespace_id: string };
    const minted = await call("POST", "/v1/keys", account.api_key, { display_name: "compose", scopes: ["inference:invoke"] });
    expect(minted.status).toBe(200);
    const { token } = (await minted.json()) as { token: string };

    const answer = await call("POST", "/v1/chat/completions", token, { model: "mock/gpt-4o-mini", messages: [{ role: "user", content: "Hello through HAProxy" }] });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-switchyard-provider")).toBe("mock");
    const body = (await answer.json()) as { choices: { message: { content: string } }[]; usage: { cost_micro_usd: number } };
    expect(body.choices[0]!.message.content).toBe("Hello, world!");
    expect(body.usage.cost_micro_usd).toBeGreaterThan(0);
    const requestId = answer.headers.get("x-request-id");

    // Written to PostgreSQL by whichever instance served it, read back through either.
    let records: { request_id: string; status: string; final_charge_micro_usd: number }[] = [];
    for (let tries = 0; tries < 100 && records.length === 0; tries++) {
      const listed = await call("GET", "/v1/requests", account.api_key);
      expect(listed.status).toBe(200);
      records = ((await listed.json()) as { data: typeof records }).data;
      if (records.length === 0) await Bun.sleep(100);
    }
    expect(records.map((record) => record.request_id)).toEqual([requestId!]);
    expect(records[0]!.status).toBe("succeeded");
    expect(records[0]!.final_charge_micro_usd).toBe(body.usage.cost_micro_usd);
  });

  test("with one instance stopped (drained by SIGTERM), the other serves through HAProxy", async () => {
    const stopped = spawnSync(container.command[0]!, [...container.command.slice(1), "stop", "--time", "30", containerOf("switchyard-1")], { env: container.env, encoding: "utf8", timeout: 60_000 });
    expect(stopped.status).toBe(0);
    const created = await call("POST", "/admin/accounts", adminToken, { email: "compose-2@example.test", credit_micro_usd: 1_000_000 });
    expect(created.status).toBe(200);
    const { api_key } = (await created.json()) as { api_key: string };
    for (let index = 0; index < 5; index++) {
      const answer = await call("POST", "/v1/chat/completions", api_key, { model: "mock/gpt-4o-mini", messages: [{ role: "user", content: `Request ${index}` }] });
      expect(answer.status).toBe(200);
    }
    expect(readyInside("switchyard-2")).toBe('200 {"status":"ready"}');
  }, 90_000);
});
