/**
 * The container image (Containerfile, `npm run image`): built, started against the test
 * runner's PostgreSQL and a mock upstream on loopback, and asked one inference request.
 *
 * Runs where a container tool can: a docker engine that answers, or podman (as
 * scripts/podman-env.sh configures it). The test runner installs neither (an image build
 * would add minutes to every CI run), so on a machine without one this file is skipped
 * with the reason printed. The build reuses an image whose inputs are unchanged
 * (scripts/build-image.sh tags by their hash): only the first run, or one after a change
 * to package.json, pays for a whole build.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { catalogFor, mockProviderEnv, startMockUpstream, type MockUpstream } from "../support/mock-upstreams";
import { freePort } from "../support/spawn-server";
import { createTestDatabase } from "../support/test-database";
import { findContainerTool, testContainer, type ContainerTool } from "../support/test-containers";

const ROOT = resolve(import.meta.dir, "../..");
const MOCK_KEY = "mock-key-for-the-image";
const ADMIN_TOKEN = "image-test-admin-token";
const BUILD_TIMEOUT_MS = 15 * 60_000;

async function run(tool: ContainerTool, args: string[], timeoutMs = 60_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([...tool.command, ...args], { env: tool.env, stdout: "pipe", stderr: "pipe", timeout: timeoutMs });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

async function mustRun(tool: ContainerTool, args: string[], timeoutMs?: number): Promise<string> {
  const result = await run(tool, args, timeoutMs);
  if (result.code !== 0) throw new Error(`${tool.name} ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return result.stdout.trim();
}

const tool = findContainerTool();
if (typeof tool === "string") console.log(`test/deploy/image.test.ts skipped: ${tool}`);

describe.skipIf(typeof tool === "string")("the container image", () => {
  const container = tool as ContainerTool;
  let image = "";
  let mock: MockUpstream;
  let database: { url: string; drop(): Promise<void> };
  let folder: string;
  let name: string;
  let url: string;

  beforeAll(async () => {
    const build = Bun.spawn(["bash", "scripts/build-image.sh"], { cwd: ROOT, env: container.env, stdout: "pipe", stderr: "pipe", timeout: BUILD_TIMEOUT_MS });
    const [stdout, stderr, code] = await Promise.all([new Response(build.stdout).text(), new Response(build.stderr).text(), build.exited]);
    if (code !== 0) throw new Error(`npm run image failed (${code}): ${stderr.slice(-4000)}`);
    image = stdout.trim().split("\n").at(-1)!;

    mock = await startMockUpstream("openai-chat", { apiKey: MOCK_KEY });
    database = await createTestDatabase();
    folder = mkdtempSync(join(tmpdir(), "switchyard-image-"));
    writeFileSync(join(folder, "providers.json"), JSON.stringify(catalogFor([mock], { scenarioSuffixes: [] })));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // Named and labelled by the test runner's pid: when the run is interrupted before
    // afterAll, the runner removes it (test/support/test-containers.ts).
    const labelled = testContainer("image");
    name = labelled.name;
    const env = {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: database.url,
      ADMIN_TOKEN,
      BYOK_MASTER_KEY: Buffer.alloc(32, 9).toString("base64"),
      PROVIDERS_FILE: "/etc/switchyard/providers.json",
      LOG_LEVEL: "warn",
      ...mockProviderEnv(MOCK_KEY),
    };
    await mustRun(container, [
      "run", "--detach", "--name", name, ...labelled.flags, "--network", "host", ...container.runFlags,
      "--volume", `${join(folder, "providers.json")}:/etc/switchyard/providers.json:ro`,
      ...Object.entries(env).flatMap(([key, value]) => ["--env", `${key}=${value}`]),
      image,
    ]);
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`${url}/ping`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline) throw new Error(`the container did not answer /ping: ${(await run(container, ["logs", name])).stderr}`);
      await Bun.sleep(200);
    }
  }, BUILD_TIMEOUT_MS + 120_000);

  afterAll(async () => {
    if (name) await run(container, ["rm", "--force", "--volumes", name]);
    await mock?.close();
    await database?.drop();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  test("serves an inference request through the mock upstream, from a read-only root with only DATA_DIR writable", async () => {
    const created = await fetch(`${url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "image@example.test", credit_micro_usd: 1_000_000 }),
    });
    expect(created.status).toBe(200);
    const { api_key } = (await created.json()) as { api_key: string };
    const answer = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${api_key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "Hello from the image test" }] }),
    });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]!.message.content).toBe("Hello, world!");
    // The request went to the mock with the platform key from the container's environment.
    expect(mock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${MOCK_KEY}`);
  });

  test("the server is PID 1 (exec form, so SIGTERM reaches it), runs as a non-root user, and cannot write outside DATA_DIR", async () => {
    const status = await mustRun(container, ["exec", name, "cat", "/proc/1/status"]);
    expect(/^Name:\s+(\S+)/m.exec(status)![1]).toBe("bun");
    const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status)!;
    expect(Number(uids[1])).not.toBe(0);
    expect(Number(uids[2])).not.toBe(0);
    const probe = (path: string) => run(container, ["exec", name, "/usr/local/bin/bun", "-e", `require("fs").writeFileSync(${JSON.stringify(path)}, "x")`]);
    expect((await probe("/app/written-by-the-test")).code).not.toBe(0);
    expect((await probe("/tmp/written-by-the-test")).code).not.toBe(0);
    expect((await probe("/data/written-by-the-test")).code).toBe(0);
  });

  test("it carries production dependencies only: no devDependency, no Node.js or npm, and Bun at the pinned version", async () => {
    const manifest = (await Bun.file(join(ROOT, "package.json")).json()) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    // The packages installed in the image, and every peer dependency they declare: npm
    // installs a production package's peers as production dependencies (typescript, a
    // peer of @elysiajs/openapi, is one), so a devDependency that is also such a peer stays.
    const survey = `
      const fs = require("fs");
      const root = "/app/node_modules";
      const names = fs.readdirSync(root).flatMap((name) => name.startsWith("@") ? fs.readdirSync(root + "/" + name).map((inner) => name + "/" + inner) : [name]);
      const installed = names.filter((name) => fs.existsSync(root + "/" + name + "/package.json"));
      const peers = installed.flatMap((name) => Object.keys(JSON.parse(fs.readFileSync(root + "/" + name + "/package.json", "utf8")).peerDependencies ?? {}));
      console.log(JSON.stringify({ installed, peers }));`;
    const { installed, peers } = JSON.parse(await mustRun(container, ["exec", name, "/usr/local/bin/bun", "-e", survey])) as { installed: string[]; peers: string[] };
    for (const dependency of Object.keys(manifest.dependencies)) expect(installed).toContain(dependency);
    const devOnly = Object.keys(manifest.devDependencies).filter((dependency) => !peers.includes(dependency));
    expect(devOnly).toContain("bun");
    expect(installed.filter((name) => devOnly.includes(name))).toEqual([]);
    for (const tool of ["node", "npm"]) expect((await run(container, ["exec", name, "sh", "-c", `command -v ${tool}`])).code).not.toBe(0);
    expect(await mustRun(container, ["exec", name, "/usr/local/bin/bun", "--version"])).toBe(manifest.devDependencies.bun!);
  });

  test("the image's HEALTHCHECK command passes against the running server", async () => {
    type Healthcheck = { Test: string[] };
    const [inspected] = JSON.parse(await mustRun(container, ["image", "inspect", image])) as { Config: { Healthcheck?: Healthcheck; StopSignal?: string }; Healthcheck?: Healthcheck }[];
    // docker keeps it in Config, podman beside it.
    const check = (inspected!.Config.Healthcheck ?? inspected!.Healthcheck)!.Test;
    expect(check[0]).toBe("CMD");
    expect(inspected!.Config.StopSignal).toBe("SIGTERM");
    expect((await run(container, ["exec", name, ...check.slice(1)])).code).toBe(0);
  });

  test("SIGTERM from a stop drains the server and it exits 0", async () => {
    await mustRun(container, ["stop", "--time", "30", name], 60_000);
    const code = await mustRun(container, ["inspect", "--format", "{{.State.ExitCode}}", name]);
    expect(code).toBe("0");
  }, 90_000);
});
