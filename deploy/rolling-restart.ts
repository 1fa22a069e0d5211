/**
 * A rolling restart of the compose stack under load (README "Deployment"):
 *
 *   COMPOSE="docker compose -f deploy/compose.yaml" ADMIN_TOKEN=… bun deploy/rolling-restart.ts
 *
 * Creates an account through the balancer, keeps CLIENTS clients sending
 * `GET /v1/namespaces` back to back through it, stops and starts each instance in turn with
 * the compose tool (`stop` sends SIGTERM and waits for the drain), waits SETTLE_MS for the
 * balancer to take the restarted one back, and prints what the clients got. Nothing here
 * needs an upstream provider. Exits 1 when any request was not answered 200.
 *
 * COMPOSE       the compose command, with its -f/-p flags (default: docker compose -f deploy/compose.yaml)
 * BALANCER_URL  where HAProxy listens (default: http://127.0.0.1:${SWITCHYARD_PORT:-8080})
 * ADMIN_TOKEN   the stack's operator token
 * SERVICES      the instances, in order (default: switchyard-1,switchyard-2)
 */
const compose = (process.env.COMPOSE ?? "docker compose -f deploy/compose.yaml").split(" ").filter((word) => word !== "");
const balancer = process.env.BALANCER_URL ?? `http://127.0.0.1:${process.env.SWITCHYARD_PORT ?? "8080"}`;
const adminToken = process.env.ADMIN_TOKEN;
const instances = (process.env.SERVICES ?? "switchyard-1,switchyard-2").split(",");
const CLIENTS = 6;
/** Start, migrations checked, and HAProxy's `rise 2` at `inter 1s`, with room. */
const SETTLE_MS = 8_000;

if (!adminToken) {
  console.error("ADMIN_TOKEN is not set: the stack's operator token creates the account the load uses");
  process.exit(2);
}

async function run(args: string[]): Promise<void> {
  const child = Bun.spawn([...compose, ...args], { stdout: "ignore", stderr: "inherit" });
  const code = await child.exited;
  if (code !== 0) throw new Error(`${[...compose, ...args].join(" ")} exited ${code}`);
}

const created = await fetch(`${balancer}/admin/accounts`, {
  method: "POST",
  headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
  body: JSON.stringify({ email: `rolling-restart-${Date.now()}@example.test` }),
});
if (created.status !== 200) throw new Error(`POST /admin/accounts through ${balancer} answered ${created.status}`);
const { api_key: apiKey } = (await created.json()) as { api_key: string };

const tally = { sent: 0, ok: 0, non200: {} as Record<string, number>, refusedOrReset: 0 };
let loading = true;
const client = async () => {
  while (loading) {
    tally.sent++;
    try {
      const response = await fetch(`${balancer}/v1/namespaces`, { headers: { authorization: `Bearer ${apiKey}` } });
      await response.arrayBuffer();
      if (response.status === 200) tally.ok++;
      else tally.non200[response.status] = (tally.non200[response.status] ?? 0) + 1;
    } catch {
      tally.refusedOrReset++;
    }
  }
};
const started = performance.now();
const clients = Array.from({ length: CLIENTS }, client);
await Bun.sleep(2_000);
for (const instance of instances) {
  const stopping = performance.now();
  await run(["stop", instance]);
  console.log(`${instance}: stopped in ${((performance.now() - stopping) / 1000).toFixed(1)} s`);
  await run(["start", instance]);
  await Bun.sleep(SETTLE_MS);
}
loading = false;
await Promise.all(clients);
const seconds = (performance.now() - started) / 1000;
console.log(`rolling restart of ${instances.length} instances through ${balancer} in ${seconds.toFixed(0)} s, ${CLIENTS} clients: ${JSON.stringify(tally)}`);
process.exit(tally.ok === tally.sent ? 0 : 1);
