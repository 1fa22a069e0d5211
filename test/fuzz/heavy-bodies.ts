import { DEEP_JSON } from "./fuzz-inputs";

/**
 * The heaviest inputs a client can send within (and just past) the inference body limit:
 * bodies of nearly the whole limit (ASCII and non-ASCII, declared and chunked, same
 * protocol and translated), bodies past it (declared and streamed), JSON 100k deep, and
 * hundreds of thousands of small parts. heavy-bodies.test.ts sends them and checks the
 * answers and the server's memory; test/bench/memory.ts sends them for the peak RSS they cause.
 */

export interface HeavyCase {
  name: string;
  path: string;
  /** The body, built when sent (tens of MiB each: never held for all cases at once). */
  body: () => string;
  /** Sent without a Content-Length, in chunked framing. */
  chunked: boolean;
  /** The statuses a correct server answers with. */
  expect: readonly number[];
}

const CHAT = "/v1/chat/completions";
const MESSAGES = "/v1/messages";

/** A chat body `bytes` long (UTF-8): one user message whose content fills it with `fill`. */
function chatOfSize(model: string, bytes: number, fill: string): string {
  const head = `{"model":"${model}","max_tokens":16,"messages":[{"role":"user","content":"`;
  const tail = `"}]}`;
  const fillBytes = Buffer.byteLength(fill);
  return head + fill.repeat(Math.floor((bytes - head.length - tail.length) / fillBytes)) + tail;
}

/** A chat body with `count` short messages: many small parts, each an object in every representation. */
function manyMessages(model: string, count: number): string {
  const message = `{"role":"user","content":[{"type":"text","text":"hi"}]},`;
  return `{"model":"${model}","max_tokens":16,"messages":[${message.repeat(count - 1)}{"role":"user","content":"end"}]}`;
}

/** Messages-protocol body of `count` text blocks. */
function manyBlocks(model: string, count: number): string {
  const block = `{"type":"text","text":"hi"},`;
  return `{"model":"${model}","max_tokens":16,"messages":[{"role":"user","content":[${block.repeat(count - 1)}{"type":"text","text":"end"}]}]}`;
}

/**
 * The heavy cases for a server whose inference body limit is `limit` bytes, naming the
 * models `sameModel` (an openai-chat upstream: the chat client's own protocol, a translation
 * for a Messages client) and `crossModel` (an upstream that needs translation from chat).
 */
export function heavyCases(limit: number, sameModel: string, crossModel: string): HeavyCase[] {
  const nearly = limit - 1024;
  return [
    { name: "a body of nearly the limit, ASCII, same protocol", path: CHAT, body: () => chatOfSize(sameModel, nearly, "x"), chunked: false, expect: [200] },
    { name: "a body of nearly the limit, ASCII, translated", path: CHAT, body: () => chatOfSize(crossModel, nearly, "x"), chunked: false, expect: [200] },
    { name: "a body of nearly the limit, non-ASCII (two-byte characters)", path: CHAT, body: () => chatOfSize(sameModel, nearly, "é"), chunked: false, expect: [200] },
    { name: "a chunked body of nearly the limit", path: CHAT, body: () => chatOfSize(sameModel, nearly, "x"), chunked: true, expect: [200] },
    { name: "a chunked body of twice the limit", path: CHAT, body: () => chatOfSize(sameModel, limit * 2, "x"), chunked: true, expect: [413] },
    { name: "JSON 100k deep", path: CHAT, body: () => `{"model":"${sameModel}","messages":[{"role":"user","content":"hi"}],"metadata":${DEEP_JSON()}}`, chunked: false, expect: [400] },
    { name: "many small messages (a quarter of the limit)", path: CHAT, body: () => manyMessages(crossModel, Math.floor(limit / 4 / 56)), chunked: false, expect: [200, 400] },
    { name: "many small content blocks, Messages protocol", path: MESSAGES, body: () => manyBlocks(sameModel, Math.floor(limit / 4 / 28)), chunked: false, expect: [200, 400] },
  ];
}
