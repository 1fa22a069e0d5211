/**
 * The stand-in upstream of the compose stack under test (compose.yaml beside this file):
 * the openai-chat mock the other tests use, listening on every address of its container
 * at the port providers.json names, so the Switchyard instances reach it by its service
 * name on the compose network. Runs in the server's own image (Bun is there; the mock
 * needs nothing outside test/support/mock-upstreams) until the container is stopped.
 *
 *   bun test/deploy/compose-stand-in/stand-in.ts     MOCK_API_KEY: the key it requires
 */
import { startMockUpstream } from "../../support/mock-upstreams";

const PORT = 8090;
const apiKey = process.env.MOCK_API_KEY;
if (!apiKey) throw new Error("MOCK_API_KEY is not set: the stand-in answers only the key the instances send");

const mock = await startMockUpstream("openai-chat", { apiKey, hostname: "0.0.0.0", port: PORT });
// The mock keeps every request for tests in its own process; nobody reads them here.
setInterval(() => {
  mock.requests.length = 0;
}, 1_000);
console.log(`stand-in upstream (openai-chat) listening on port ${PORT}`);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    void mock.close().then(() => process.exit(0));
  });
}
