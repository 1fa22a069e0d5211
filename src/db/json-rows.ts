import { assertPlainColumnNames, type CopyColumnKind } from "./copy-rows";
import { storableJson, storableText } from "./storable-text";

/** One column's value as JSON, by its kind, made storable like a COPY field (storable-text.ts). */
const JSON_BY_KIND: Record<CopyColumnKind, (value: never) => string> = {
  value: (value: string | number | boolean | null | undefined) =>
    typeof value === "string" ? JSON.stringify(storableText(value)) : value === undefined ? "null" : JSON.stringify(value),
  json: (value: unknown) => (value === null || value === undefined ? "null" : storableJson(value)),
  "text[]": (value: readonly string[] | null | undefined) => (value === null || value === undefined ? "null" : JSON.stringify(value.map(storableText))),
};

/**
 * A function that renders rows as one JSON array of objects, `columns` only, for the
 * statements that take a batch as a single `json_to_recordset` parameter. Every value
 * goes through the same storable-text rule as a COPY line, so the two write paths store
 * the same text, and no `\u0000` or lone-surrogate escape reaches PostgreSQL's JSON
 * functions (which refuse to turn them into text). Compiled once per table, as
 * copyLineWriter is.
 */
export function jsonRowsWriter<Row>(columns: readonly (keyof Row & string)[], kinds: Partial<Record<keyof Row & string, CopyColumnKind>>): (rows: readonly Row[]) => string {
  assertPlainColumnNames(columns);
  const fields = columns.map((column, i) => `${JSON.stringify(`${i === 0 ? "{" : ","}"${column}":`)} + ${kindName(kinds[column] ?? "value")}(row.${column})`);
  const render = new Function("value", "json", "textArray", `return (row) => ${fields.join(" + ")} + "}";`);
  const object = render(JSON_BY_KIND.value, JSON_BY_KIND.json, JSON_BY_KIND["text[]"]) as (row: Row) => string;
  return (rows) => `[${rows.map(object).join(",")}]`;
}

function kindName(kind: CopyColumnKind): string {
  return kind === "text[]" ? "textArray" : kind;
}
