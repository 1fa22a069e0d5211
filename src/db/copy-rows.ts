import type { Writable } from "node:stream";
import type { Sql } from "./connect-database";
import { inSendOrder } from "./in-send-order";
import { MAX_STORED_TEXT_CHARS, storableJson, storableText } from "./storable-text";

/**
 * How long a binary COPY encodes and sends chunks before it lets the event loop turn. A
 * turn under load is a whole wave of requests (~10 ms at 64 connections), so a turn after
 * every chunk (100 rows, ~2 ms) stretched a flush of 2,000 rows to ~450 ms, and the rows
 * waiting for it to 13,000–14,000 (answered requests a crash would leave unrecorded, and
 * heap they hold). With 4 ms slices: ~240 ms, at most ~4,300 rows waiting, the same CPU
 * and p99 (test/bench/HISTORY.md, 2026-11-30 02:14–02:30).
 */
const COPY_SLICE_MS = 4;

/**
 * `COPY … FROM STDIN` (text format) through postgres.js: for the metering write path,
 * where PostgreSQL spends about half the CPU on a COPY that it spends on the same rows
 * through `insert … select … from json_to_recordset(…)`.
 *
 * postgres.js 3.4 never settles the writable when the server rejects a COPY after
 * CopyDone (porsager/postgres#1173): awaiting "finish" would hang and leak the
 * connection in an aborted transaction. So this waits only until CopyDone has been
 * sent, then runs a sentinel query on the same connection. The sentinel is answered
 * after the COPY: it fails if the COPY failed (the transaction is aborted) or the
 * connection closed, and the caller's transaction rolls back as for any other error.
 *
 * The sentinel's own error says only "transaction is aborted" (25P02). The COPY's real
 * one (a refused value, 22xxx; a duplicate key, 23505) reaches the COPY query's `reject`
 * after its promise has already resolved with the writable, where it would be lost; it
 * is caught there and thrown instead, so the caller can tell refused data from an outage.
 *
 * `then` makes the statements that follow the COPY in the caller's transaction; they are
 * sent with the sentinel, in one round trip (inSendOrder), instead of one each after it.
 * They fail with it when the COPY failed, and copyInto throws the COPY's error; otherwise
 * the first of them that failed.
 */
export async function copyInto(sql: Sql, table: string, columns: readonly string[], lines: readonly string[], format?: "text", then?: CopyFollowUps): Promise<void>;
/**
 * The same with the data already encoded (copy-binary.ts), each chunk sent as it comes.
 * `chunks` may encode lazily: each chunk goes to the socket as soon as it is encoded, so
 * PostgreSQL ingests one while the gateway encodes the next, and the event loop turns once
 * the COPY has held it for COPY_SLICE_MS. A chunk that throws ends the COPY with CopyFail,
 * and copyInto rejects with that error (the transaction is aborted, as for a refused COPY).
 */
export async function copyInto(sql: Sql, table: string, columns: readonly string[], chunks: Iterable<Uint8Array>, format: "binary", then?: CopyFollowUps): Promise<void>;
export async function copyInto(sql: Sql, table: string, columns: readonly string[], data: Iterable<string | Uint8Array>, format: "text" | "binary" = "text", then?: CopyFollowUps): Promise<void> {
  const query = sql.unsafe(`copy ${table} (${columns.join(", ")}) from stdin${format === "binary" ? " (format binary)" : ""}`);
  let copyError: unknown;
  const internals = query as unknown as { reject?: (error: unknown) => void };
  const reject = internals.reject;
  if (typeof reject === "function") {
    internals.reject = (error) => {
      copyError = error;
      reject(error);
    };
  }
  const writable = (await query.writable()) as unknown as Writable & {
    _final(callback: (error?: Error | null) => void): void;
  };
  const copyDoneSent = new Promise<void>((resolve, reject) => {
    const sendCopyDone = writable._final.bind(writable);
    writable._final = (callback) => {
      sendCopyDone(callback);
      resolve();
    };
    writable.once("error", reject);
  });
  // Not awaited when the stream is destroyed first (below): its rejection is the sentinel's to report.
  copyDoneSent.catch(() => {});
  if (format === "text") writable.end((data as readonly string[]).join(""));
  else {
    try {
      let sliceStart = performance.now();
      for (const chunk of data) {
        // The connection died meanwhile: the sentinel below fails, and so does the flush.
        if (writable.destroyed) break;
        writable.write(chunk);
        if (performance.now() - sliceStart < COPY_SLICE_MS) continue;
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    } catch (error) {
      writable.destroy(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    if (!writable.destroyed) writable.end();
  }
  if (!writable.destroyed) await copyDoneSent;
  try {
    // execute(): sent now, ahead of what `then` makes (postgres.js sends a query when it is awaited).
    const sentinel = sql`select 1`.execute();
    await inSendOrder(then === undefined ? [sentinel] : [sentinel, ...then()]);
  } catch (error) {
    throw copyError ?? error;
  }
}

/** The statements that follow a COPY in its transaction, made (and so sent) when called. */
export type CopyFollowUps = () => readonly PromiseLike<unknown>[];

/**
 * One field in COPY text format: `\N` for null; a string made storable (storable-text.ts:
 * NUL and lone surrogates replaced, length capped), then backslash, newline, CR and tab
 * escaped.
 */
export function copyField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return "\\N";
  if (typeof value !== "string") return String(value);
  if (value.length > MAX_STORED_TEXT_CHARS) return copyEscaped(storableText(value));
  // A char-code scan: most fields (ids, names, timestamps) need nothing, and this costs a
  // fraction of a regular expression test on every one of them.
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 14 ? code === 0 || code === 9 || code === 10 || code === 13 : code === 92 || (code >= 0xd800 && code <= 0xdfff)) {
      return copyEscaped(storableText(value));
    }
  }
  return value;
}

/** Backslash, newline, CR and tab escaped for COPY text format; nothing else changed. */
function copyEscaped(value: string): string {
  return value.replace(/[\\\n\r\t]/g, escapeChar);
}

/**
 * A JSON document as one COPY field, made storable (storableJson). JSON.stringify already
 * escapes every control character, so only backslashes need doubling, and most documents
 * have none.
 */
export function copyJson(value: unknown): string {
  const json = storableJson(value);
  return json.includes("\\") ? json.replaceAll("\\", "\\\\") : json;
}

function escapeChar(char: string): string {
  switch (char) {
    case "\\":
      return "\\\\";
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    default:
      return "\\t";
  }
}

/** A text[] field: each element made storable, `{"a","b"}` with array quoting, then COPY escaping. */
export function copyTextArray(values: readonly string[]): string {
  return copyEscaped(`{${values.map((v) => `"${storableText(v).replace(/["\\]/g, "\\$&")}"`).join(",")}}`);
}

/** How each column of a row is written: as is, as JSON, or as a text array. */
export type CopyColumnKind = "value" | "json" | "text[]";

/** Renders one column's value as a COPY field, by its kind; null and undefined are `\N`. */
const FIELD_BY_KIND: Record<CopyColumnKind, (value: never) => string> = {
  value: copyField,
  json: (value: unknown) => (value === null || value === undefined ? "\\N" : copyJson(value)),
  "text[]": (value: readonly string[] | null | undefined) => (value === null || value === undefined ? "\\N" : copyTextArray(value)),
};

const COLUMN_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * A function that renders a row as one COPY line, `columns` in order. It is compiled once
 * per table so each column is a plain property load (`row.status`) passed to its kind's
 * renderer, rather than a keyed lookup by name and a test of the kind: ~25 % less CPU on
 * the 31-column request record, which every metered request writes. Column names are
 * checked to be plain identifiers first.
 */
export function copyLineWriter<Row>(columns: readonly (keyof Row & string)[], kinds: Partial<Record<keyof Row & string, CopyColumnKind>>): (row: Row) => string {
  assertPlainColumnNames(columns);
  const fields = columns.map((column) => `${kindName(kinds[column] ?? "value")}(row.${column})`);
  const render = new Function("value", "json", "textArray", `return (row) => ${fields.join(' + "\\t" + ')} + "\\n";`);
  return render(FIELD_BY_KIND.value, FIELD_BY_KIND.json, FIELD_BY_KIND["text[]"]) as (row: Row) => string;
}

/** Throws unless every name is a plain lower-case identifier (names are compiled into renderers). */
export function assertPlainColumnNames(columns: readonly string[]): void {
  for (const column of columns) if (!COLUMN_NAME.test(column)) throw new Error(`not a plain column name: ${column}`);
}

function kindName(kind: CopyColumnKind): string {
  return kind === "text[]" ? "textArray" : kind;
}
