/**
 * Child process: the openai-chat and anthropic-messages mock upstreams (test/support), on
 * loopback. Prints one JSON line `{"openai-chat": baseUrl, "anthropic-messages": baseUrl}`
 * and runs until its stdin closes (the bench exited, however it exited).
 *
 *   bun test/bench/start-mock.ts <api-key> [--catalog <file>]
 *
 * With `--catalog`, it also writes a catalog (PROVIDERS_FILE) naming its openai-chat
 * address: the model `mock/gpt-4o-mini` of the provider `mock`, whose key is read from
 * MOCK_API_KEY (README "Quickstart"). The ports are new on every run, so a catalog typed
 * by hand goes stale; this one is written before the JSON line is printed, whole (a
 * temporary file renamed into place), so whoever waits for the line finds it complete.
 *
 * MOCK_SCENARIO (JSON of test/support/mock-upstreams' MockScenario) replaces the default
 * answer, for benches of other shapes of traffic: a long answer streamed a word a chunk is
 * `{"kind":"text","text":"<many words>","chunkDelayMs":1}`.
 */
import { renameSync, writeFileSync } from "node:fs";
import { startMockUpstream, type MockScenario, type MockUpstream } from "../support/mock-upstreams";

const USAGE = "usage: bun test/bench/start-mock.ts <api-key> [--catalog <file>]";
const [apiKey, flag, catalogPath] = process.argv.slice(2);
if (apiKey === undefined || (flag !== undefined && (flag !== "--catalog" || catalogPath === undefined))) throw new Error(USAGE);

const scenario = process.env.MOCK_SCENARIO ? (JSON.parse(process.env.MOCK_SCENARIO) as MockScenario) : undefined;
const mocks: MockUpstream[] = [
  await startMockUpstream("openai-chat", { apiKey, ...(scenario ? { scenario } : {}) }),
  await startMockUpstream("anthropic-messages", { apiKey, ...(scenario ? { scenario } : {}) }),
];
// The mocks record every request for tests to inspect; a benchmark sends hundreds of
// thousands, so forget them as they come.
setInterval(() => {
  for (const mock of mocks) mock.requests.length = 0;
}, 250);

if (catalogPath !== undefined) {
  const catalog = {
    providers: [{ id: "mock", name: "Mock OpenAI", protocol: "openai-chat", base_url: mocks[0]!.baseUrl, api_key_env: "MOCK_API_KEY" }],
    models: [{ id: "mock/gpt-4o-mini", endpoints: [{ provider: "mock", provider_model_id: "gpt-4o-mini", pricing: { input: 0.15, output: 0.6 } }] }],
  };
  writeFileSync(`${catalogPath}.tmp`, `${JSON.stringify(catalog, null, 2)}\n`);
  renameSync(`${catalogPath}.tmp`, catalogPath);
}

console.log(JSON.stringify(Object.fromEntries(mocks.map((mock) => [mock.protocol, mock.baseUrl]))));

for await (const _ of Bun.stdin.stream()) {
  // nothing is sent; the loop ends when the parent goes away
}
await Promise.all(mocks.map((mock) => mock.close()));
process.exit(0);
