import { ApiError } from "../errors/api-error";
import type { Beside, WorkerAnswer } from "../workers/wire-format";
import { IrDecodeError, type IrError, type IrMessage, type IrRequest, type ProtocolId } from "../ir";
import { StreamTranslation } from "./stream-translation";
import { bodySize, decodeClientRequest, encodeUpstreamRequest } from "./translate-request";
import { translateResponse, type TranslateResponseInput } from "./translate-response";
import type { ClientBody, DecodedRequest, EncodedUpstreamRequest, StreamOpenOptions, TranslatedResponse } from "./translation-types";
import { codecFor } from "./codec-registry";
import { utf8Bytes } from "./utf8-bytes";
import { findLargeStrings, LARGE_STRING_CHARS } from "./large-strings";
import { packForWorker, unpackFromWorker } from "./worker-message";

/**
 * The worker side of translation: one JSON message in, one JSON message out, so
 * the pool moves only strings. Stream sessions live here between calls (the pool
 * pins a session's calls to one worker).
 */
export type TranslationMessage =
  /** `keep`: the decoded messages stay here under that key, for the request's encode (keptMessages). */
  | { op: "decode_request"; protocol: ProtocolId; body: ClientBody; injected?: Record<string, unknown>; keep?: string }
  /** `keptMessages`: the request's messages are the ones its decode kept here (its own `messages` is a placeholder). */
  | { op: "encode_request"; protocol: ProtocolId; request: IrRequest; providerModelId: string; stream: boolean; keptMessages?: string }
  /** The request ended without an encode: its kept messages go. */
  | { op: "forget"; key: string }
  | ({ op: "translate_response" } & TranslateResponseInput)
  | { op: "stream_open"; options: StreamOpenOptions }
  | { op: "stream_push"; sessionId: string; text: string }
  | { op: "stream_end"; sessionId: string }
  | { op: "stream_fail"; sessionId: string; error: IrError };

/** `keptGone`: the messages an encode named are not kept here (dropped, or this worker is not the one that decoded them). */
export type TranslationReply = { ok: true; value: unknown } | { ok: false; decodeError?: string; keptGone?: true; message: string };

/**
 * Decoded messages kept for their request's encode, by key, oldest first. An encode takes
 * them (a later one, for another candidate, gets them from the request thread again); a
 * request that ends without one has them forgotten (translator.ts). At most MAX_KEPT: past
 * it the oldest go, and their encode falls back to sending them.
 */
const kept = new Map<string, IrMessage[]>();
const MAX_KEPT = 64;

/** The messages an encode named are not kept here; the pool's caller throws it again from the reply's `keptGone` (translator.ts). */
export class KeptMessagesGone extends Error {}

function keep(key: string, messages: IrMessage[]): void {
  kept.set(key, messages);
  if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value!);
}

/** The request to encode, with the messages its decode kept if it names them. */
function withKeptMessages(message: Extract<TranslationMessage, { op: "encode_request" }>): IrRequest {
  const key = message.keptMessages;
  if (key === undefined) return message.request;
  const messages = kept.get(key);
  if (messages === undefined) throw new KeptMessagesGone(`messages kept as ${key} are gone`);
  kept.delete(key);
  return { ...message.request, messages };
}

const sessions = new Map<string, StreamTranslation>();

function session(sessionId: string): StreamTranslation {
  const found = sessions.get(sessionId);
  if (!found) throw new Error(`unknown stream session ${sessionId}`);
  return found;
}

export function handleTranslation(message: TranslationMessage): unknown {
  switch (message.op) {
    case "decode_request": {
      const decoded = decodeClientRequest(message.protocol, message.body, message.injected);
      if (message.keep !== undefined) keep(message.keep, decoded.request.messages);
      return decoded;
    }
    case "encode_request":
      return encodeUpstreamRequest(message.protocol, withKeptMessages(message), message.providerModelId, message.stream);
    case "forget":
      kept.delete(message.key);
      return null;
    case "translate_response":
      return translateResponse(message);
    case "stream_open":
      sessions.set(message.options.sessionId, new StreamTranslation(message.options));
      return null;
    case "stream_push":
      return session(message.sessionId).push(message.text);
    case "stream_end": {
      const output = session(message.sessionId).end();
      sessions.delete(message.sessionId);
      return output;
    }
    case "stream_fail": {
      // The error came as JSON: an ApiError again, like every error the gateway makes.
      const output = session(message.sessionId).fail(ApiError.from(message.error));
      sessions.delete(message.sessionId);
      return output;
    }
  }
}

/**
 * String in, string out: what workers/translate.worker.ts serves. A message's `body` comes
 * beside its JSON (a client's large body as the chunks it was read in), and an answer's
 * `body` (an encoded request, a translated response) goes back the same way; so do the long
 * strings of a decoded request, both ways (worker-message.ts), so a large body is never
 * escaped into JSON and parsed out of it again (src/workers/wire-format.ts).
 */
export function handleTranslationMessage(payload: string, beside?: Beside): string | WorkerAnswer {
  let reply: TranslationReply;
  try {
    const message = JSON.parse(payload) as TranslationMessage;
    unpackFromWorker(message, beside);
    let value = handleTranslation(message);
    // A decoded request's long strings go back beside the answer; only a body that long can hold one.
    const paths = message.op === "decode_request" && bodySize(message.body) >= LARGE_STRING_CHARS ? findLargeStrings((value as DecodedRequest).request) : undefined;
    if (message.op === "encode_request") value = withBlobBody(value as EncodedUpstreamRequest);
    if (message.op === "translate_response") value = withBlobAnswer(value as TranslatedResponse, message.client);
    const packed = packForWorker(value, paths);
    if (packed.beside !== undefined) return { body: JSON.stringify({ ok: true, value: packed.value } satisfies TranslationReply), ...packed.beside };
    reply = { ok: true, value };
  } catch (error) {
    reply =
      error instanceof IrDecodeError
        ? { ok: false, decodeError: error.message, message: error.message }
        : error instanceof KeptMessagesGone
          ? { ok: false, keptGone: true, message: error.message }
          : { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  return JSON.stringify(reply);
}

/**
 * A large encoded body that is not ASCII goes back as a Blob of its UTF-8 bytes, made here:
 * fetch on the request thread sends a Blob as it is, while it converts such a string to
 * UTF-8 first (~120 ms for 32 MiB, measured; an ASCII string it sends in a few ms).
 */
function withBlobBody(encoded: EncodedUpstreamRequest): EncodedUpstreamRequest {
  return isLargeAndNotAscii(encoded.body) ? { ...encoded, body: new Blob([encoded.body]) } : encoded;
}

/** A string long enough to be set aside whose UTF-8 bytes are not its characters (an ASCII one the runtime sends as it is). */
function isLargeAndNotAscii(body: unknown): body is string {
  return typeof body === "string" && body.length >= LARGE_STRING_CHARS && Buffer.byteLength(body) !== body.length;
}

/**
 * A large translated answer goes back as a Blob of its UTF-8 bytes, made here, with where
 * the client codec's charge goes into it as a byte offset (respond-json.ts splices the charge
 * in by joining slices of the Blob). Returned as a string, the request thread would join
 * the charge's splice into it and then, for the Response, flatten it and convert it to
 * UTF-8: a 30 MiB answer cost that thread 123–157 ms of CPU, 40–77 as a Blob
 * (test/bench/large-bodies.ts, ANSWERS=1, 2026-11-29).
 */
function withBlobAnswer(translated: TranslatedResponse, client: ProtocolId): TranslatedResponse {
  const body = translated.body;
  // An ASCII string the Response sends as it is: a Blob would only add a copy here.
  if (!isLargeAndNotAscii(body)) return translated;
  const bytes = new Blob([body]);
  const splice = codecFor(client).chargeSplice?.(body);
  if (splice === undefined) return { ...translated, body: bytes };
  // The charge goes near the end: the bytes after it are few to count.
  return { ...translated, body: bytes, chargeAt: { at: bytes.size - utf8Bytes(body.slice(splice.at)), separator: splice.separator } };
}
