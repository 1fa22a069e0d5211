/**
 * The one rule for text the gateway writes to PostgreSQL, applied where rows are rendered
 * (COPY lines in copy-rows.ts, JSON batches in json-rows.ts), so no value a client or an
 * upstream sent can make a batch unwritable:
 *
 * - U+0000 becomes U+FFFD. PostgreSQL `text` cannot hold NUL (COPY refuses the byte,
 *   22021) and json/jsonb refuse `\u0000` when they turn it into text (22P05).
 * - A lone UTF-16 surrogate becomes U+FFFD: it has no UTF-8 encoding. (Invalid UTF-8
 *   never reaches a JS string: decoding already replaced it with U+FFFD, the same rule.)
 * - A text column keeps at most MAX_STORED_TEXT_CHARS UTF-16 code units; a longer value
 *   is cut (never inside a surrogate pair) and ends in "…". A megabyte model name is not
 *   worth storing whole, and no id column's B-tree entry can then outgrow its page.
 * - A JSON document is stored as produced up to MAX_DOCUMENT_CHARS; a longer one has
 *   every string inside it, keys included, cut like a column.
 *
 * The common value needs none of it, so each function first checks cheaply and returns
 * its input untouched.
 */

/** Longest string kept in a text column (or, in an oversized document, in any string of it). */
export const MAX_STORED_TEXT_CHARS = 4_096;
/** Longest JSON document stored without cutting its strings. */
export const MAX_DOCUMENT_CHARS = 65_536;

const TRUNCATION_MARK = "…";
/** NUL or any surrogate: paired ones are fine, but rare enough to take the slow path. */
const MAYBE_UNSTORABLE = /[\u0000\ud800-\udfff]/;
/**
 * In JSON.stringify's output, `\u0000` and `\udXXX` (it escapes only lone surrogates);
 * `\\` is matched too, so an escaped backslash followed by "u0000" is left alone.
 */
const UNSTORABLE_ESCAPE = /\\(?:u(?:0000|d[89a-f][0-9a-f]{2})|\\)/g;

/** `value` as PostgreSQL text can store it (see the rule above). */
export function storableText(value: string): string {
  if (value.length <= MAX_STORED_TEXT_CHARS && !MAYBE_UNSTORABLE.test(value)) return value;
  return withoutUnstorable(value.length > MAX_STORED_TEXT_CHARS ? truncated(value, MAX_STORED_TEXT_CHARS) : value);
}

/** NUL and lone surrogates replaced with U+FFFD. */
function withoutUnstorable(value: string): string {
  const noNul = value.includes("\u0000") ? value.replaceAll("\u0000", "\ufffd") : value;
  return noNul.toWellFormed();
}

/** The first `maxChars - 1` code units (one fewer rather than half a surrogate pair), and "…". */
export function truncated(value: string, maxChars: number): string {
  let end = maxChars - TRUNCATION_MARK.length;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return value.slice(0, end) + TRUNCATION_MARK;
}

/**
 * `value` as JSON text whose every string is storable: as PostgreSQL text, and as json or
 * jsonb when it is read back that way. undefined for undefined, like JSON.stringify.
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) return json as unknown as string;
  if (json.length > MAX_DOCUMENT_CHARS) return JSON.stringify(mapStrings(JSON.parse(json), storableText));
  // Nothing to rewrite unless something was escaped as \u…: a control character, or worse.
  return json.includes("\\u") ? json.replace(UNSTORABLE_ESCAPE, (escape) => (escape === "\\\\" ? escape : "\\ufffd")) : json;
}

/**
 * JSON text that keeps a value as it was, for the dead-letter table: NUL and lone
 * surrogates stay visible as JSON.stringify's `\u0000` / `\udXXX` escapes (plain ASCII,
 * so the text itself is always storable), and strings (keys too) longer than `maxChars`
 * are cut.
 */
export function escapedJson(value: unknown, maxChars: number): string {
  const json = JSON.stringify(value) ?? "null";
  if (json.length <= maxChars) return json;
  return JSON.stringify(mapStrings(JSON.parse(json), (text) => (text.length > maxChars ? truncated(text, maxChars) : text)));
}

/** A copy of a parsed JSON value with `map` applied to every string in it, keys included. */
function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (value === null || typeof value !== "object") return value;
  // fromEntries defines own properties, so a "__proto__" key stays a key.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [map(key), mapStrings(item, map)]));
}
