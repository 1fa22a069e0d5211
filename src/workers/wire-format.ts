/**
 * What crosses the thread boundary between a WorkerPool and serveWorker.
 *
 *   call   (pool -> worker): { id, payload, texts?, text0?, text1?, … }  payload: the caller's string
 *   reply  (worker -> pool): { id, ok, body, texts?, text0?, … }         body: the answer, or the error message
 *
 * `text0` … `text<texts - 1>`: large strings beside the payload or the answer (a request or
 * response body being translated, the long strings of a decoded request), so that they are
 * never escaped into JSON: a 32 MiB body wrapped in a JSON payload was a copy to write and
 * another to parse on each side of the thread boundary, and on the request thread each such
 * copy stalled every other request for 100–150 ms (test/bench/HISTORY.md).
 *   ready  (worker -> pool): READY_SIGNAL, once, after the handler is installed
 *
 * Why flat objects with numbered fields, and not an array of texts or a framed string like
 * `${id}\u0001${payload}`: Bun's postMessage has two fast paths that skip the structured
 * clone, one for strings and one for plain objects whose values are all primitives: through
 * either, an existing flat string crosses in about the same time at 1 KB and at 32 MiB. Measured on Bun 1.4.5
 * with test/bench/worker-roundtrip.ts (identity handler): a 32 KB round trip takes about
 * 20 µs with these objects against about 60 µs with string framing; at 1 KB both take
 * about 20 µs. Two 16 MiB strings as an array are cloned (~120 ms on the sending thread),
 * as two fields they cross in ~2 ms (2026-11-29). Keep both messages flat and
 * primitive-valued, or the fast path is lost.
 */

/** `text0` … `text<n>`: the large strings beside a message, `texts` of them. */
type TextFields = { texts?: number } & { [field: `text${number}`]: string };

export type CallMessage = { id: number; payload: string } & TextFields;

export type ReplyMessage = { id: number; ok: boolean; body: string } & TextFields;

/** What a handler answers, and what a pool call resolves to: the answer, and the large strings beside it if any. */
export interface WorkerAnswer {
  body: string;
  texts?: readonly string[];
}

export const READY_SIGNAL = "switchyard-worker-ready";

/** More large strings than this beside one message is not a message this pool sends. */
const MAX_TEXTS = 1 << 16;

/** `message` with `texts` as its numbered fields (none when there are none: it stays as small as it was). */
export function withTexts<M extends object>(message: M, texts: readonly string[] | undefined): M & TextFields {
  if (texts === undefined || texts.length === 0) return message as M & TextFields;
  const fields = message as TextFields;
  fields.texts = texts.length;
  for (let index = 0; index < texts.length; index++) fields[`text${index}`] = texts[index]!;
  return message as M & TextFields;
}

/** The large strings beside a message the guards below accepted; undefined when it has none. */
export function textsOf(message: TextFields): string[] | undefined {
  const count = message.texts;
  if (count === undefined || count === 0) return undefined;
  const texts: string[] = new Array(count);
  for (let index = 0; index < count; index++) texts[index] = message[`text${index}`]!;
  return texts;
}

export function isCallMessage(message: unknown): message is CallMessage {
  return hasIdAndText(message, "payload");
}

export function isReplyMessage(message: unknown): message is ReplyMessage {
  return hasIdAndText(message, "body");
}

/** Both messages are objects with a numeric `id` and a string (the call's payload, the reply's body), and `texts` strings beside if any. */
function hasIdAndText(message: unknown, text: "payload" | "body"): boolean {
  if (typeof message !== "object" || message === null) return false;
  const fields = message as Record<string, unknown>;
  if (typeof fields.id !== "number" || typeof fields[text] !== "string") return false;
  const count = fields.texts;
  if (count === undefined) return true;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0 || count > MAX_TEXTS) return false;
  for (let index = 0; index < count; index++) if (typeof fields[`text${index}`] !== "string") return false;
  return true;
}
