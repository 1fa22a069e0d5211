import type { Beside } from "../workers/wire-format";
import { restoreStrings, setAsideStrings, type JsonPath } from "./large-strings";
import type { BodyBytes } from "../http/request-body";

/**
 * A translation message or answer as it crosses to or from a worker: JSON, with what is
 * large beside it (src/workers/wire-format.ts), never escaped into it:
 * - its `body`: a text (a client's body, an encoded upstream request, a translated
 *   response), a client's large body as the chunks it was read in (moved, not copied), or
 *   an encoded upstream body as a Blob (shared, not copied);
 * - the long strings of its `request` (a decoded request: large-strings.ts), listed in
 *   `largeStrings`.
 *
 * texts: the `request`'s strings in the order of `largeStrings`, then the body if it is a text.
 */
export interface Packed {
  /** What goes into the JSON. */
  value: unknown;
  beside: Beside | undefined;
}

interface Packable {
  body?: unknown;
  request?: unknown;
}

/** `value` with its body, and its `request`'s strings at `requestPaths`, set aside. `value` is not changed. */
export function packForWorker(value: unknown, requestPaths?: readonly JsonPath[]): Packed {
  if (typeof value !== "object" || value === null) return { value, beside: undefined };
  const fields = value as Packable;
  let packed: Record<string, unknown> = value as Record<string, unknown>;
  const beside: { texts?: string[]; chunks?: Uint8Array[]; blob?: Blob } = {};
  if (requestPaths !== undefined && requestPaths.length > 0) {
    const aside = setAsideStrings(fields.request, requestPaths);
    if (aside.paths.length > 0) {
      packed = { ...packed, request: aside.skeleton, largeStrings: aside.paths };
      beside.texts = aside.strings;
    }
  }
  const body = fields.body;
  if (typeof body === "string") beside.texts = beside.texts === undefined ? [body] : [...beside.texts, body];
  else if (body instanceof Blob) beside.blob = body;
  else if (isBodyBytes(body)) beside.chunks = body.chunks;
  // No body (or none of these kinds): nothing of it goes beside.
  else return { value: packed, beside: beside.texts === undefined ? undefined : beside };
  return { value: { ...packed, body: undefined }, beside };
}

/**
 * Puts back in `value` (just parsed, owned by the caller) what packForWorker set aside, and
 * answers where its `request`'s strings were (undefined when none were set aside).
 */
export function unpackFromWorker(value: unknown, beside: Beside | undefined): JsonPath[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const fields = value as Packable & { largeStrings?: JsonPath[] };
  const paths = fields.largeStrings;
  const count = paths?.length ?? 0;
  const texts = beside?.texts;
  if (paths !== undefined) {
    restoreStrings(fields.request, paths, texts?.slice(0, count) ?? []);
    delete fields.largeStrings;
  }
  if (texts !== undefined && texts.length > count) fields.body = texts[count];
  else if (beside?.blob !== undefined) fields.body = beside.blob;
  else if (beside?.chunks !== undefined) fields.body = bodyBytes(beside.chunks);
  return paths;
}

function isBodyBytes(value: unknown): value is BodyBytes {
  return typeof value === "object" && value !== null && Array.isArray((value as BodyBytes).chunks);
}

function bodyBytes(chunks: readonly Uint8Array[]): BodyBytes {
  let byteLength = 0;
  for (const chunk of chunks) byteLength += chunk.byteLength;
  return { chunks: [...chunks], byteLength };
}
