/**
 * Run as its own process by tracing-off.test.ts: starts tracing from this process's
 * environment and a server with it (as src/main.ts does), serves one chat completion
 * through it, and prints one JSON line: the answer's status and the OpenTelemetry modules
 * this process loaded. Needs DATABASE_URL, PROVIDERS_FILE (the mocks' catalog) and the
 * mocks' platform key variables.
 */
import { startTracing } from "../../src/observability/tracing";
import { startServer } from "../../src/server";

const ADMIN = "loaded-modules-admin";
const tracing = await startTracing(process.env);
const server = await startServer({ port: 0, host: "127.0.0.1", adminToken: ADMIN, logLevel: "silent" }, { tracing });
const created = await fetch(`${server.url}/admin/accounts`, {
  method: "POST",
  headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
  body: JSON.stringify({ email: `modules${Date.now()}@example.test`, credit_micro_usd: 1_000_000 }),
}).then((r) => r.json() as Promise<{ api_key: string }>);
const answer = await fetch(`${server.url}/v1/chat/completions`, {
  method: "POST",
  headers: { authorization: `Bearer ${created.api_key}`, "content-type": "application/json" },
  body: JSON.stringify({ model: "mock-openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
});
await answer.text();
const loaded = Object.keys(require.cache).filter((path) => path.includes("/node_modules/@opentelemetry/"));
await server.shutdown();
await tracing.shutdown();
console.log(JSON.stringify({ status: answer.status, openTelemetryModules: loaded.length }));
