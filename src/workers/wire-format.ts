/**
 * What crosses the thread boundary between a WorkerPool and serveWorker.
 *
 *   call   (pool -> worker): { id, payload }        payload: the caller's string
 *   reply  (worker -> pool): { id, ok, body }       body: the answer, or the error message
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
}

export interface ReplyMessage {
  id: number;
  ok: boolean;
  body: string;
}

export const READY_SIGNAL = "switchyard-worker-ready";

export function isCallMessage(message: unknown): message is CallMessage {
  return (
    typeof message === "object" &&
    message !== null &&
    typeof (message as CallMessage).id === "number" &&
    typeof (message as CallMessage).payload === "string"
  );
}

export function isReplyMessage(message: unknown): message is ReplyMessage {
  return (
    typeof message === "object" &&
    message !== null &&
    typeof (message as ReplyMessage).id === "number" &&
    typeof (message as ReplyMessage).body === "string"
  );
}
