/**
 * Child process: the openai-chat and anthropic-messages mock upstreams (test/helpers), on
 * loopback. Prints one JSON line `{"openai-chat": baseUrl, "anthropic-messages": baseUrl}`
 * and runs until its stdin closes (the bench exited, however it exited).
 *
 *   bun test/bench/start-mock.ts <api-key>
 */
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstreams";

const apiKey = process.argv[2];
if (apiKey === undefined) throw new Error("usage: bun test/bench/start-mock.ts <api-key>");

const mocks: MockUpstream[] = [
  await startMockUpstream("openai-chat", { apiKey }),
  await startMockUpstream("anthropic-messages", { apiKey }),
];
// The mocks record every request for tests to inspect; a benchmark sends hundreds of
// thousands, so forget them as they come.
setInterval(() => {
  for (const mock of mocks) mock.requests.length = 0;
}, 250);

console.log(JSON.stringify(Object.fromEntries(mocks.map((mock) => [mock.protocol, mock.baseUrl]))));

for await (const _ of Bun.stdin.stream()) {
  // nothing is sent; the loop ends when the parent goes away
}
await Promise.all(mocks.map((mock) => mock.close()));
process.exit(0);
