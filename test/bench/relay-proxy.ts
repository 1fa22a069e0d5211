/**
 * Child process: the bare proxy (bare-proxy.ts), except that its JavaScript sees every
 * chunk of a streamed answer: it reads the upstream's body chunk by chunk, decodes it and
 * writes it to a direct stream, as the gateway's same-protocol relay does. What a relay
 * must do at least, so relay-floor.ts can tell the runtime's part of a stream's cost from
 * the pipeline's. Options add the gateway's own pieces one at a time (environment):
 *
 *   ACCOUNT  letters: p the SSE parser on each chunk, d the chat stream decoder on its
 *            events (needs p), n the decoder without frame shapes, r the model-id rewrite
 *   CODEC=1  the client body decoded to the IR and encoded again (translate-request.ts)
 *   GARBAGE_KB  short-lived small objects (objects, closures, arrays) made per request
 *   LIVE_MB     a heap of small objects kept alive for the process's life
 *
 *   bun test/bench/relay-proxy.ts <upstream base URL, e.g. http://127.0.0.1:1234/v1>
 */
import { decodeClientRequest, encodeUpstreamRequest } from "../../src/translation/translate-request";
import { createChatStreamDecoder } from "../../src/protocols/openai-chat/decode-stream";
import { SseParser } from "../../src/protocols/sse/parse-sse";
import { rewriteModelIds } from "../../src/translation/rewrite-model-id";

const upstream = process.argv[2];
if (upstream === undefined) throw new Error("usage: bun test/bench/relay-proxy.ts <upstream base URL>");
const target = `${upstream}/chat/completions`;
const account = process.env.ACCOUNT ?? "";
const codec = process.env.CODEC === "1";

const live: unknown[] = [];
for (let i = 0; i < (Number(process.env.LIVE_MB ?? 0) * 1024 * 1024) / 64; i++) live.push({ a: i, b: `s${i}`, c: [i] });
/** About 48 bytes of heap a cell. */
const garbageCells = Math.round((Number(process.env.GARBAGE_KB ?? 0) * 1024) / 48);
let lastGarbage: unknown;
function makeGarbage(): void {
  if (garbageCells === 0) return;
  const cells: unknown[] = [];
  for (let i = 0; i < garbageCells; i++) cells.push(i % 3 === 0 ? { x: i, y: `v${i}` } : i % 3 === 1 ? () => i : [i, i]);
  lastGarbage = cells;
}

async function upstreamBody(request: Request): Promise<string | ArrayBuffer> {
  if (!codec) return request.arrayBuffer();
  return encodeUpstreamRequest("openai-chat", decodeClientRequest("openai-chat", await request.text()).request, "gpt-4o-mini", true).body;
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (request.method === "GET" && pathname === "/ping") return new Response(null, { status: 200 });
    if (request.method !== "POST" || pathname !== "/v1/chat/completions") return new Response("not found", { status: 404 });
    makeGarbage();
    const response = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: request.headers.get("authorization") ?? "" },
      body: await upstreamBody(request),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const parser = account.includes("p") ? new SseParser() : undefined;
    const events = account.includes("d") ? createChatStreamDecoder(account.includes("n") ? { readShapes: false } : {}) : undefined;
    const body = new ReadableStream({
      type: "direct",
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          let text = decoder.decode(value, { stream: true });
          if (parser) for (const event of parser.push(text)) events?.push(event);
          if (account.includes("r")) text = rewriteModelIds(text, "gpt-4o-mini");
          const written = controller.write(text);
          if (typeof written !== "number") await written;
        }
        controller.close();
      },
    });
    return new Response(body, { status: response.status, headers: { "content-type": response.headers.get("content-type") ?? "application/json" } });
  },
});

console.log(`http://127.0.0.1:${server.port}`);

for await (const _ of Bun.stdin.stream()) {
  // nothing is sent; the loop ends when the parent goes away (or closes stdin: a CPU profile is then written)
}
server.stop(true);
void lastGarbage;
process.exit(0);
