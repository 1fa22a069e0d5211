/**
 * Child process: a collector stand-in for the bench's "tracing on" variant. Accepts OTLP/HTTP
 * trace exports on loopback and throws them away (a benchmark exports millions of spans),
 * prints its base URL as one line, and runs until its stdin closes; then it says on stderr
 * how many exports and bytes it took.
 *
 *   bun test/bench/otlp-sink.ts
 */
export {};

let received = 0;
let bytes = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    bytes += (await request.arrayBuffer()).byteLength;
    received++;
    return new Response(new Uint8Array(0), { headers: { "content-type": "application/x-protobuf" } });
  },
});
console.log(`http://127.0.0.1:${server.port}`);

for await (const _ of Bun.stdin.stream()) {
  // nothing is sent; the loop ends when the parent goes away
}
console.error(`otlp sink: ${received} exports, ${bytes} bytes`);
server.stop(true);
process.exit(0);
