/**
 * What crosses the thread boundary between a WorkerPool and serveWorker.
 *
 *   call   (pool -> worker): { id, payload, text? }  payload: the caller's string
 *   reply  (worker -> pool): { id, ok, body, text? } body: the answer, or the error message
 *
 * `text`: one large string beside the payload or the answer (a request or response body
 * being translated), so that it is never escaped into JSON: a 32 MiB body wrapped in a JSON
 * payload was a copy to write and another to parse on each side of the thread boundary.
 *   ready  (worker -> pool): READY_SIGNAL, once, after the handler is installed
 *
 * Why flat objects and not a framed string like `${id}\u0001${payload}`: Bun's
 * postMessage has two fast paths that skip the structured clone, one for strings and
 * one for plain objects whose values are all primitives. Through either, passing an
 * existing flat string costs about the same at 1 KB and at 32 KB; a framed string is a
 * fresh concatenation that has to be flattened first, a copy of the whole payload on
 * each side. Measured on Bun 1.4.5 with test/bench/worker-roundtrip.ts (identity
 * handler): a 32 KB round trip takes about 20 µs with these objects against about
 * 60 µs with string framing; at 1 KB both take about 20 µs.
 * Keep both messages flat and primitive-valued, or the fast path is lost.
 */

export interface CallMessage {
  id: number;
  payload: string;
  text?: string;
}

export interface ReplyMessage {
  id: number;
  ok: boolean;
  body: string;
  text?: string;
}

/** What a handler answers, and what a pool call resolves to: the answer, and the large string beside it if any. */
export interface WorkerAnswer {
  body: string;
  text?: string;
}

export const READY_SIGNAL = "switchyard-worker-ready";

export function isCallMessage(message: unknown): message is CallMessage {
  return hasIdAndText(message, "payload");
}

export function isReplyMessage(message: unknown): message is ReplyMessage {
  return hasIdAndText(message, "body");
}

/** Both messages are objects with a numeric `id` and a string (the call's payload, the reply's body), and a string or nothing as `text`. */
function hasIdAndText(message: unknown, text: "payload" | "body"): boolean {
  if (typeof message !== "object" || message === null) return false;
  const fields = message as Record<string, unknown>;
  return typeof fields.id === "number" && typeof fields[text] === "string" && (fields.text === undefined || typeof fields.text === "string");
}
