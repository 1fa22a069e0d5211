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
 * primitive-valued, or the fast path is lost. Chunks and a blob (Beside) leave it on
 * purpose: they come only with bodies of megabytes, where moving or sharing their bytes
 * saves far more than the clone of a small message costs.
 */

/** `text0` … `text<n>`: the large strings beside a message, `texts` of them. */
type TextFields = { texts?: number } & { [field: `text${number}`]: string };

/** The fields that carry a message's Beside (below). */
type BesideFields = TextFields & { chunks?: Uint8Array[]; blob?: Blob };

export type CallMessage = { id: number; payload: string } & BesideFields;

export type ReplyMessage = { id: number; ok: boolean; body: string } & BesideFields;

/** What may travel beside a call's payload or a reply's body, none of it escaped into them. */
export interface Beside {
  /** Large strings: flat fields, so the message keeps its fast path when it has nothing else beside. */
  texts?: readonly string[];
  /**
   * Bytes moved to the other thread, not copied: each chunk's buffer is transferred (the
   * sender's chunk is left empty). A client's large body read off its socket goes to the
   * worker this way, so the request thread never joins or decodes it.
   */
  chunks?: readonly Uint8Array[];
  /** A blob, whose bytes the threads share: an encoded upstream body that fetch sends as it is. */
  blob?: Blob;
}

/** What a handler answers, and what a pool call resolves to: the answer, and what came beside it. */
export type WorkerAnswer = { body: string } & Beside;

export const READY_SIGNAL = "switchyard-worker-ready";

/** More large strings or chunks than this beside one message is not a message this pool sends. */
const MAX_BESIDE = 1 << 16;

/**
 * `message` with `beside` on its fields (none when it has nothing: it stays as small as it
 * was), and the buffers to transfer with it. A chunk that does not own its whole buffer is
 * copied first: transferring a buffer empties every view of it on this side.
 */
export function withBeside<M extends object>(message: M, beside: Beside | undefined): { message: M & BesideFields; transfer: ArrayBuffer[] } {
  const fields = message as M & BesideFields;
  const transfer: ArrayBuffer[] = [];
  if (beside === undefined) return { message: fields, transfer };
  const texts = beside.texts;
  if (texts !== undefined && texts.length > 0) {
    const textFields = fields as TextFields;
    textFields.texts = texts.length;
    for (let index = 0; index < texts.length; index++) textFields[`text${index}`] = texts[index]!;
  }
  if (beside.chunks !== undefined && beside.chunks.length > 0) {
    const moved = new Set<ArrayBufferLike>();
    fields.chunks = beside.chunks.map((chunk) => {
      const owned = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer && !moved.has(chunk.buffer) ? chunk : chunk.slice();
      moved.add(owned.buffer);
      transfer.push(owned.buffer as ArrayBuffer);
      return owned;
    });
  }
  if (beside.blob !== undefined) fields.blob = beside.blob;
  return { message: fields, transfer };
}

/** What came beside a message the guards below accepted; undefined when nothing did. */
export function besideOf(message: BesideFields): Beside | undefined {
  const count = message.texts ?? 0;
  if (count === 0 && message.chunks === undefined && message.blob === undefined) return undefined;
  const beside: { texts?: string[]; chunks?: Uint8Array[]; blob?: Blob } = {};
  if (count > 0) {
    const texts: string[] = new Array(count);
    for (let index = 0; index < count; index++) texts[index] = message[`text${index}`]!;
    beside.texts = texts;
  }
  if (message.chunks !== undefined) beside.chunks = message.chunks;
  if (message.blob !== undefined) beside.blob = message.blob;
  return beside;
}

export function isCallMessage(message: unknown): message is CallMessage {
  return hasIdAndText(message, "payload");
}

export function isReplyMessage(message: unknown): message is ReplyMessage {
  return hasIdAndText(message, "body");
}

/** Both messages are objects with a numeric `id` and a string (the call's payload, the reply's body), and a well-formed Beside if any. */
function hasIdAndText(message: unknown, text: "payload" | "body"): boolean {
  if (typeof message !== "object" || message === null) return false;
  const fields = message as Record<string, unknown>;
  if (typeof fields.id !== "number" || typeof fields[text] !== "string") return false;
  const count = fields.texts;
  if (count !== undefined) {
    if (typeof count !== "number" || !Number.isInteger(count) || count < 0 || count > MAX_BESIDE) return false;
    for (let index = 0; index < count; index++) if (typeof fields[`text${index}`] !== "string") return false;
  }
  return hasValidBytesBeside(fields);
}

/** Chunks (at most MAX_BESIDE of them, each a Uint8Array) and a blob, or none: in a message or in a handler's answer alike. */
export function hasValidBytesBeside(fields: { chunks?: unknown; blob?: unknown }): boolean {
  const chunks = fields.chunks;
  if (chunks !== undefined && !(Array.isArray(chunks) && chunks.length <= MAX_BESIDE && chunks.every((chunk) => chunk instanceof Uint8Array))) return false;
  return fields.blob === undefined || fields.blob instanceof Blob;
}
