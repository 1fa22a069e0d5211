import { restoreStrings, setAsideStrings, type JsonPath } from "./large-strings";

/**
 * A translation message or answer as it crosses to or from a worker: JSON, with its large
 * strings beside it (src/workers/wire-format.ts). Those are its `body` (a client's request
 * body, an encoded upstream request, a translated response) and the long strings of its
 * `request` (a decoded request: large-strings.ts), listed in `largeStrings`.
 *
 * texts: the `request`'s strings in the order of `largeStrings`, then the body if any.
 */
export interface Packed {
  /** What goes into the JSON. */
  value: unknown;
  texts: string[] | undefined;
}

interface Packable {
  body?: unknown;
  request?: unknown;
}

/** `value` with its body, and its `request`'s strings at `requestPaths`, set aside. `value` is not changed. */
export function packForWorker(value: unknown, requestPaths?: readonly JsonPath[]): Packed {
  if (typeof value !== "object" || value === null) return { value, texts: undefined };
  const fields = value as Packable;
  let packed: Record<string, unknown> = value as Record<string, unknown>;
  let texts: string[] | undefined;
  if (requestPaths !== undefined && requestPaths.length > 0) {
    const aside = setAsideStrings(fields.request, requestPaths);
    if (aside.paths.length > 0) {
      packed = { ...packed, request: aside.skeleton, largeStrings: aside.paths };
      texts = aside.strings;
    }
  }
  if (typeof fields.body === "string") {
    packed = { ...packed, body: undefined };
    texts = texts === undefined ? [fields.body] : [...texts, fields.body];
  }
  return { value: packed, texts };
}

/**
 * Puts back in `value` (just parsed, owned by the caller) what packForWorker set aside, and
 * answers where its `request`'s strings were (undefined when none were set aside).
 */
export function unpackFromWorker(value: unknown, texts: readonly string[] | undefined): JsonPath[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const fields = value as Packable & { largeStrings?: JsonPath[] };
  const paths = fields.largeStrings;
  const count = paths?.length ?? 0;
  if (paths !== undefined) {
    restoreStrings(fields.request, paths, texts?.slice(0, count) ?? []);
    delete fields.largeStrings;
  }
  if (texts !== undefined && texts.length > count) fields.body = texts[count];
  return paths;
}
