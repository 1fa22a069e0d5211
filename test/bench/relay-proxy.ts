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
 *   PARTS    letters: the gateway's own relay parts instead of the plain ones: c the upstream
 *            call (callUpstream: its abort signals, timer and headers; with s, a signal of
 *            its own instead of the request's; t, the body read as bytes and decoded), b the
 *            body reader with its idle deadline (BodyReader), f the passthrough framer (frame
 *            cuts, model id; without f, the model id is rewritten only with ACCOUNT's r); without
 *            c, one ingredient of callUpstream's at a time on the plain fetch: S an abort
 *            signal, T a timer, B a text body, H its four headers, R redirect "manual"
 *   FRAME=1  what the server does around every request: the request hooks (in-flight gauge,
 *            body budget, idle collector, the HTTP metrics) and Server-Timing
 *   GARBAGE_KB  short-lived small objects (objects, closures, arrays) made per request
 *   LIVE_MB     a heap of small objects kept alive for the process's life
 *
 *   bun test/bench/relay-proxy.ts <upstream base URL, e.g. http://127.0.0.1:1234/v1>
 */
import { decodeClientRequest, encodeUpstreamRequest } from "../../src/translation/translate-request";
import { createChatStreamDecoder } from "../../src/protocols/openai-chat/decode-stream";
import { SseParser } from "../../src/protocols/sse/parse-sse";
import { rewriteModelIds } from "../../src/translation/rewrite-model-id";
import { createRequestHooks } from "../../src/http/request-hooks";
import { BodyBudget } from "../../src/http/body-budget";
import { IdleCollector } from "../../src/http/idle-collector";
import { Metrics } from "../../src/observability/metrics";
import { withServerTiming } from "../../src/pipeline/server-timing";
import { callUpstream } from "../../src/routing/call-upstream";
import { BodyReader } from "../../src/routing/body-reader";
import { PassthroughFramer } from "../../src/pipeline/passthrough-framer";

const upstream = process.argv[2];
if (upstream === undefined) throw new Error("usage: bun test/bench/relay-proxy.ts <upstream base URL>");
const target = `${upstream}/chat/completions`;
const account = process.env.ACCOUNT ?? "";
const codec = process.env.CODEC === "1";
const parts = process.env.PARTS ?? "";
const TIMEOUTS = { connectMs: 10_000, firstByteMs: 60_000, idleMs: 60_000 };
const metrics = new Metrics();
const MAX_BODY = 32 * 1024 * 1024;
const hooks = process.env.FRAME === "1" ? createRequestHooks(metrics, () => ({ bytes: MAX_BODY, refuse: () => new Response(null, { status: 413 }) }), new BodyBudget(MAX_BODY), new IdleCollector()) : undefined;

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
    const startedAt = performance.now();
    const refused = hooks?.before(request, pathname);
    if (refused) return refused;
    return withHooks(await relay(request), startedAt, request);
  },
});

/** fetch as the plain relay calls it, in callUpstream's result shape. */
async function plainCall(request: Request) {
  // Letters for one of callUpstream's ingredients at a time: S its abort signal, T its timer, B a text body, H its headers, R redirect "manual".
  const controller = new AbortController();
  const timer = parts.includes("T") ? setTimeout(() => controller.abort(), 60_000) : undefined;
  const headers: Record<string, string> = parts.includes("H")
    ? { "content-type": "application/json", accept: "application/json, text/event-stream", "x-request-id": "req_0123456789abcdefghij", authorization: request.headers.get("authorization") ?? "" }
    : { "content-type": "application/json", authorization: request.headers.get("authorization") ?? "" };
  const response = await fetch(target, {
    method: "POST",
    headers,
    body: parts.includes("B") ? await request.text() : await upstreamBody(request),
    ...(parts.includes("S") ? { signal: controller.signal } : {}),
    ...(parts.includes("R") ? { redirect: "manual" as const } : {}),
  });
  clearTimeout(timer);
  return { ok: true as const, response, controller, release: () => {} };
}

/** The body's chunks as text, as the plain relay reads them, in BodyReader's shape. */
function plainReader(body: ReadableStream<Uint8Array>): { next(): Promise<string | undefined> } {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  return {
    async next() {
      const { done, value } = await reader.read();
      return done ? undefined : decoder.decode(value, { stream: true });
    },
  };
}

function withHooks(answer: Response, startedAt: number, request: Request): Response {
  if (hooks === undefined) return answer;
  hooks.after("/v1/chat/completions", "POST", answer.status, startedAt, request);
  return withServerTiming(metrics.gatewayOverhead, "openai-chat", startedAt, undefined, answer);
}

/** The relay: plain fetch, reader and writes, or the gateway's own parts where PARTS names them. */
async function relay(request: Request): Promise<Response> {
  const call = !parts.includes("c") ? await plainCall(request) : await callUpstream({
    target: { protocol: "openai-chat", baseUrl: upstream!, providerModelId: "gpt-4o-mini", apiKey: (request.headers.get("authorization") ?? "").replace(/^Bearer /, "") },
    body: parts.includes("t") ? await request.arrayBuffer().then((bytes) => new TextDecoder().decode(bytes)) : await request.text(),
    stream: true,
    clientHeaders: request.headers,
    requestId: "req_relay",
    timeouts: TIMEOUTS,
    // "s": a signal of our own instead of the request's (what reading request.signal costs).
    clientSignal: parts.includes("s") ? new AbortController().signal : request.signal,
  });
  if (!call.ok) return new Response(null, { status: 502 });
  const reader = parts.includes("b") ? new BodyReader(call.response.body!, TIMEOUTS.idleMs, () => call.controller.abort()) : plainReader(call.response.body!);
  const framer = parts.includes("f") ? new PassthroughFramer("openai-chat", "gpt-4o-mini", false) : { take: (text: string) => (account.includes("r") ? rewriteModelIds(text, "gpt-4o-mini") : text), flush: () => "" };
  const parser = account.includes("p") ? new SseParser() : undefined;
  const events = account.includes("d") ? createChatStreamDecoder(account.includes("n") ? { readShapes: false } : {}) : undefined;
  const body = new ReadableStream({
    type: "direct",
    async pull(controller) {
      for (;;) {
        const text = await reader.next();
        if (text === undefined) break;
        if (parser) for (const event of parser.push(text)) events?.push(event);
        const out = framer.take(text);
        if (out === "") continue;
        const written = controller.write(out);
        if (typeof written !== "number") await written;
      }
      const rest = framer.flush();
      if (rest !== "") controller.write(rest);
      call.release();
      controller.close();
    },
  });
  return new Response(body, { status: call.response.status, headers: { "content-type": call.response.headers.get("content-type") ?? "application/json" } });
}

console.log(`http://127.0.0.1:${server.port}`);

for await (const _ of Bun.stdin.stream()) {
  // nothing is sent; the loop ends when the parent goes away (or closes stdin: a CPU profile is then written)
}
server.stop(true);
void lastGarbage;
process.exit(0);
