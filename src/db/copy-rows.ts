import type { Writable } from "node:stream";
import type { Sql } from "./connect-database";

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
 */
export async function copyInto(sql: Sql, table: string, columns: readonly string[], lines: readonly string[]): Promise<void> {
  const writable = (await sql.unsafe(`copy ${table} (${columns.join(", ")}) from stdin`).writable()) as unknown as Writable & {
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
  writable.end(lines.join(""));
  await copyDoneSent;
  await sql`select 1`;
}

/** One field in COPY text format: `\N` for null, and backslash, newline, CR and tab escaped. */
export function copyField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return "\\N";
  if (typeof value !== "string") return String(value);
  return /[\\\n\r\t]/.test(value) ? value.replace(/[\\\n\r\t]/g, escapeChar) : value;
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

/** A text[] field: `{"a","b"}` with array quoting, then COPY escaping. */
export function copyTextArray(values: readonly string[]): string {
  return copyField(`{${values.map((v) => `"${v.replace(/["\\]/g, "\\$&")}"`).join(",")}}`);
}

/** How each column of a row is written: as is, as JSON, or as a text array. */
export type CopyColumnKind = "value" | "json" | "text[]";

/** A row as one COPY line, `columns` in order. */
export function copyLine<Row>(row: Row, columns: readonly (keyof Row & string)[], kinds: Partial<Record<keyof Row & string, CopyColumnKind>>): string {
  let line = "";
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    const value = row[column] as unknown;
    const kind = kinds[column] ?? "value";
    const field =
      value === null || value === undefined
        ? "\\N"
        : kind === "json"
          ? copyField(JSON.stringify(value))
          : kind === "text[]"
            ? copyTextArray(value as string[])
            : copyField(value as string | number | boolean);
    line += i === 0 ? field : "\t" + field;
  }
  return line + "\n";
}
