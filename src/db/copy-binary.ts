import type { Sql } from "./connect-database";
import { assertPlainColumnNames, copyInto, type CopyFollowUps } from "./copy-rows";
import { MAX_STORED_TEXT_CHARS, storableJson, storableText } from "./storable-text";

/**
 * `COPY … FROM STDIN (FORMAT binary)` for the metering write path. PostgreSQL reads each
 * field with its type's binary receive function instead of parsing text (a timestamp
 * alone costs it more to parse than a B-tree insert), and the gateway writes the fields
 * straight into one buffer with no escaping: no per-character scan of every field, no
 * tab-joined line strings to flatten and encode again. Measured on the write path's rows
 * in test/bench/HISTORY.md.
 *
 * Every value is made storable by the same rule as a text COPY line (storable-text.ts):
 * text is cut at MAX_STORED_TEXT_CHARS and NUL becomes U+FFFD here; a lone surrogate
 * becomes U+FFFD in the UTF-8 encoder, as toWellFormed would. JSON columns take
 * storableJson's text.
 *
 * A value the binary form could store differently from the text form (a fractional or
 * out-of-range number in an integer column, a timestamp not in the gateway's own ISO
 * form, a non-string in a text column) makes the encoder give up on the batch: the
 * caller writes it as text lines, where PostgreSQL judges it exactly as before (and
 * refuses it, for isolateRefusedRows, when it must).
 */

/** How a column is sent: its PostgreSQL type (`json` is JSON text stored in a text column). */
export type BinaryColumnType = "text" | "json" | "int4" | "int8" | "bool" | "timestamptz" | "text[]";

/** A batch of rows as binary COPY tuples, or undefined when a value has no exact binary form. */
export type BinaryRowsEncoder<Row> = (rows: readonly Row[]) => Uint8Array | undefined;

/** The 11-byte signature, flags and header-extension length of a binary COPY stream. */
const HEADER = new Uint8Array([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
/** A field count of -1 ends the stream. */
const TRAILER = new Uint8Array([0xff, 0xff]);
/** Strings up to this long are tried as plain ASCII first (TupleWriter.ascii). */
const SHORT_STRING_CHARS = 64;
/** pg_type oid of text: a text[] value names its element type. */
const TEXT_OID = 25;
/** 2000-01-01T00:00:00Z, PostgreSQL's timestamp epoch, in Unix milliseconds. */
const POSTGRES_EPOCH_MS = 946_684_800_000;
/** The gateway's own timestamp form (isoTimestamp): anything else goes through text COPY. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Sends tuples from an encoder of one table in one COPY (binary), header and trailer
 * added. `tuples` may encode lazily, each chunk while PostgreSQL ingests the one before
 * (see copyInto); one that throws aborts the COPY. `then` as in copyInto.
 */
export async function copyBinaryInto(sql: Sql, table: string, columns: readonly string[], tuples: Iterable<Uint8Array>, then?: CopyFollowUps): Promise<void> {
  await copyInto(sql, table, columns, framed(tuples), "binary", then);
}

function* framed(tuples: Iterable<Uint8Array>): Generator<Uint8Array> {
  yield HEADER;
  yield* tuples;
  yield TRAILER;
}

/** Given up on this batch: a value whose binary form might differ from its text form. */
class NotExact extends Error {}

/** A growing byte buffer that binary fields are written into. */
class TupleWriter {
  bytes: Buffer;
  view: DataView;
  at = 0;

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(capacity);
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }

  ensure(extra: number): void {
    if (this.at + extra <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.at + extra));
    this.bytes.copy(grown, 0, 0, this.at);
    this.bytes = grown;
    this.view = new DataView(grown.buffer, grown.byteOffset, grown.byteLength);
  }

  int16(value: number): void {
    this.ensure(2);
    this.view.setInt16(this.at, value);
    this.at += 2;
  }

  int32(value: number): void {
    this.ensure(4);
    this.view.setInt32(this.at, value);
    this.at += 4;
  }

  null(): void {
    this.int32(-1);
  }

  /**
   * A short string of ASCII without NUL (most ids, names and statuses), byte by byte: a
   * third of the cost of a native encoder call for one. False, having written nothing,
   * for anything else.
   */
  ascii(value: string): boolean {
    const length = value.length;
    if (length > SHORT_STRING_CHARS) return false;
    this.ensure(4 + length);
    const bytes = this.bytes;
    const start = this.at + 4;
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code === 0 || code > 0x7f) return false;
      bytes[start + i] = code;
    }
    this.view.setInt32(this.at, length);
    this.at = start + length;
    return true;
  }

  /** A length-prefixed UTF-8 string (lone surrogates encode as U+FFFD). */
  utf8(value: string): void {
    if (this.ascii(value)) return;
    this.ensure(4 + value.length * 3);
    const written = this.bytes.write(value, this.at + 4, "utf8");
    this.view.setInt32(this.at, written);
    this.at += 4 + written;
  }

  text(value: unknown): void {
    if (value === null || value === undefined) return this.null();
    if (typeof value !== "string") throw new NotExact();
    if (this.ascii(value)) return;
    this.utf8(value.length > MAX_STORED_TEXT_CHARS || value.includes("\u0000") ? storableText(value) : value);
  }

  json(value: unknown): void {
    if (value === null || value === undefined) return this.null();
    // A request's warnings are nearly always none.
    if (Array.isArray(value) && value.length === 0) return void this.ascii("[]");
    this.utf8(storableJson(value));
  }

  int4(value: unknown): void {
    if (value === null || value === undefined) return this.null();
    if (typeof value !== "number" || !Number.isInteger(value) || value < -2_147_483_648 || value > 2_147_483_647) throw new NotExact();
    this.ensure(8);
    this.view.setInt32(this.at, 4);
    this.view.setInt32(this.at + 4, value);
    this.at += 8;
  }

  int8(value: unknown): void {
    if (value === null || value === undefined) return this.null();
    if (typeof value !== "number" || !Number.isSafeInteger(value)) throw new NotExact();
    this.int64(value);
  }

  bool(value: unknown): void {
    if (value === null || value === undefined) return this.null();
    if (typeof value !== "boolean") throw new NotExact();
    this.ensure(5);
    this.view.setInt32(this.at, 1);
    this.bytes[this.at + 4] = value ? 1 : 0;
    this.at += 5;
  }

  timestamptz(value: unknown): void {
    if (value === null || value === undefined) return this.null();
    if (typeof value !== "string") throw new NotExact();
    this.int64(postgresMicros(value));
  }

  textArray(value: unknown): void {
    if (value === null || value === undefined) return this.null();
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) throw new NotExact();
    const lengthAt = this.at;
    this.ensure(24);
    this.at += 4;
    // ndim (0 for an empty array, as PostgreSQL sends '{}'), no nulls, element type text.
    this.view.setInt32(this.at, value.length === 0 ? 0 : 1);
    this.view.setInt32(this.at + 4, 0);
    this.view.setInt32(this.at + 8, TEXT_OID);
    this.at += 12;
    if (value.length > 0) {
      this.view.setInt32(this.at, value.length);
      this.view.setInt32(this.at + 4, 1);
      this.at += 8;
      for (const item of value as string[]) this.utf8(storableText(item));
    }
    this.view.setInt32(lengthAt, this.at - lengthAt - 4);
  }

  /** A length-prefixed int8 from a safe integer (two's complement across both halves). */
  private int64(value: number): void {
    this.ensure(12);
    const high = Math.floor(value / 4_294_967_296);
    this.view.setInt32(this.at, 8);
    this.view.setInt32(this.at + 4, high);
    this.view.setUint32(this.at + 8, value - high * 4_294_967_296);
    this.at += 12;
  }

  done(): Uint8Array {
    return this.bytes.subarray(0, this.at);
  }
}

/** The last second parsed ("2026-11-22T07:29:44.") and its microseconds since PostgreSQL's epoch. */
let cachedSecond = "";
let cachedSecondMicros = 0;

/**
 * Microseconds since 2000-01-01 of an isoTimestamp string. A request's rows carry two,
 * nearly always within the second before: that second is parsed once and reused, so a
 * timestamp costs a prefix comparison and three digits instead of Date.parse.
 */
function postgresMicros(value: string): number {
  if (value.length === 24 && value.charCodeAt(23) === 0x5a && cachedSecond !== "" && value.startsWith(cachedSecond)) {
    const hundreds = value.charCodeAt(20) - 0x30;
    const tens = value.charCodeAt(21) - 0x30;
    const units = value.charCodeAt(22) - 0x30;
    if (hundreds >= 0 && hundreds <= 9 && tens >= 0 && tens <= 9 && units >= 0 && units <= 9) {
      return cachedSecondMicros + (hundreds * 100 + tens * 10 + units) * 1_000;
    }
  }
  if (!ISO_UTC.test(value)) throw new NotExact();
  const ms = Date.parse(value);
  if (!Number.isSafeInteger(ms)) throw new NotExact();
  cachedSecond = value.slice(0, 20);
  cachedSecondMicros = (ms - (ms % 1_000 + 1_000) % 1_000 - POSTGRES_EPOCH_MS) * 1_000;
  return (ms - POSTGRES_EPOCH_MS) * 1_000;
}

const METHOD_BY_TYPE: Record<BinaryColumnType, string> = {
  text: "text",
  json: "json",
  int4: "int4",
  int8: "int8",
  bool: "bool",
  timestamptz: "timestamptz",
  "text[]": "textArray",
};

/**
 * An encoder for rows of one table, `columns` in order with their types. Compiled once
 * per table, like copyLineWriter, so each field is a plain property load handed to its
 * type's writer. Column names are checked to be plain identifiers first.
 */
export function binaryRowsEncoder<Row>(columns: readonly (keyof Row & string)[], types: Record<keyof Row & string, BinaryColumnType>): BinaryRowsEncoder<Row> {
  assertPlainColumnNames(columns);
  const fields = columns.map((column) => `out.${METHOD_BY_TYPE[types[column]]}(row.${column});`).join("\n");
  const writeRow = new Function("out", "row", `out.int16(${columns.length});\n${fields}`) as (out: TupleWriter, row: Row) => void;
  let averageBytes = 256;
  return (rows) => {
    const out = new TupleWriter(Math.max(1_024, Math.ceil(rows.length * averageBytes * 1.25)));
    try {
      for (const row of rows) writeRow(out, row);
    } catch (error) {
      if (error instanceof NotExact) return undefined;
      throw error;
    }
    if (rows.length > 0) averageBytes = out.at / rows.length;
    return out.done();
  };
}
