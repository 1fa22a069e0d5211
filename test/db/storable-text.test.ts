import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { copyField, copyInto, copyLineWriter, copyTextArray } from "../../src/db/copy-rows";
import { jsonRowsWriter } from "../../src/db/json-rows";
import { MAX_DOCUMENT_CHARS, MAX_STORED_TEXT_CHARS, escapedJson, storableJson, storableText } from "../../src/db/storable-text";
import { createTestDatabase } from "../support/test-database";

let sql: Sql;
let drop: () => Promise<void>;
beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  sql = postgres(database.url, { max: 2, onnotice: () => {} }) as unknown as Sql;
  await sql.unsafe("create table stored (id text primary key, note text, tags text[], doc text)");
});
afterAll(async () => {
  await sql.end({ timeout: 1 });
  await drop();
});

describe("storableText", () => {
  test("returns ordinary text untouched, paired surrogates (emoji) included", () => {
    for (const text of ["", "plain", "tab\tnewline\n", "é 🚀 \u{10ffff}", "x".repeat(MAX_STORED_TEXT_CHARS)]) expect(storableText(text)).toBe(text);
  });

  test("NUL and lone surrogates become U+FFFD", () => {
    expect(storableText("a\u0000b")).toBe("a\ufffdb");
    expect(storableText("\ud800")).toBe("\ufffd");
    expect(storableText("x\udc00y\ud83d")).toBe("x\ufffdy\ufffd");
    expect(storableText("\u0000🚀\u0000")).toBe("\ufffd🚀\ufffd");
  });

  test("longer text is cut to MAX_STORED_TEXT_CHARS, ending in …, never inside a surrogate pair", () => {
    const cut = storableText("m".repeat(1 << 20));
    expect(cut).toBe(`${"m".repeat(MAX_STORED_TEXT_CHARS - 1)}…`);
    const emoji = storableText("🚀".repeat(MAX_STORED_TEXT_CHARS));
    expect(emoji.length).toBeLessThanOrEqual(MAX_STORED_TEXT_CHARS);
    expect(emoji.toWellFormed()).toBe(emoji);
    expect(emoji.endsWith("🚀…")).toBe(true);
  });
});

describe("storableJson", () => {
  test("is JSON.stringify for ordinary documents", () => {
    const doc = { a: "b", n: [1, null, true], nested: { "🚀": "tab\t\\ \"q\"" } };
    expect(storableJson(doc)).toBe(JSON.stringify(doc));
    expect(storableJson(undefined)).toBeUndefined();
  });

  test("NUL and lone surrogates in values and keys become \\ufffd; a literal backslash before u0000 is left alone", () => {
    const json = storableJson({ v: "a\u0000b\ud800", "k\u0000": ["\udfff"], literal: "\\u0000 and \\\\u0000", control: "\u0001" });
    expect(JSON.parse(json)).toEqual({ v: "a\ufffdb\ufffd", "k\ufffd": ["\ufffd"], literal: "\\u0000 and \\\\u0000", control: "\u0001" });
  });

  test("a document beyond MAX_DOCUMENT_CHARS has every string cut, keys included; a smaller one is kept whole", () => {
    const kept = { s: "x".repeat(MAX_DOCUMENT_CHARS - 20) };
    expect(storableJson(kept)).toBe(JSON.stringify(kept));
    const big = { [`k${"K".repeat(1 << 20)}`]: "v".repeat(1 << 20), list: ["w".repeat(1 << 20), 7], nul: "\u0000" };
    const parsed = JSON.parse(storableJson(big)) as Record<string, unknown>;
    const keys = Object.keys(parsed);
    expect(keys.map((key) => key.length)).toEqual([MAX_STORED_TEXT_CHARS, 4, 3]);
    expect((parsed[keys[0]!] as string).length).toBe(MAX_STORED_TEXT_CHARS);
    expect(parsed.list).toEqual([`${"w".repeat(MAX_STORED_TEXT_CHARS - 1)}…`, 7]);
    expect(parsed.nul).toBe("\ufffd");
  });
});

describe("escapedJson (dead letters)", () => {
  test("keeps NUL and lone surrogates visible as escapes, in plain ASCII, and cuts long strings", () => {
    const json = escapedJson({ id: "a\u0000\ud800", long: "z".repeat(100) }, 10);
    expect(json).toBe('{"id":"a\\u0000\\ud800","long":"zzzzzzzzz…"}');
    expect(JSON.parse(json).id).toBe("a\u0000\ud800");
  });
});

interface StoredRow {
  id: string;
  note: string | null;
  tags: string[];
  doc: unknown;
}
const COLUMNS = ["id", "note", "tags", "doc"] as const;
const KINDS = { tags: "text[]", doc: "json" } as const;

describe("unstorable text on PostgreSQL, by COPY and by a JSON batch", () => {
  const awkward = (id: string): StoredRow => ({
    id,
    note: `nul\u0000 lone\ud800 tab\t back\\ ${"m".repeat(1 << 20)}`,
    tags: ["a\u0000", "\udc00b", `"q"`],
    doc: { text: "x\u0000\udfff", "key\u0000": 1, long: "y".repeat(1 << 20), nested: [{ deep: "\ud800" }] },
  });

  async function readBack(id: string) {
    const [row] = await sql.unsafe("select id, note, tags, doc, doc::jsonb as as_jsonb from stored where id = $1", [id]);
    return row!;
  }

  function expectStorable(row: Record<string, unknown>, id: string) {
    expect(row.id).toBe(id);
    expect(row.note).toBe(storableText(`nul\u0000 lone\ud800 tab\t back\\ ${"m".repeat(1 << 20)}`));
    expect((row.note as string).length).toBe(MAX_STORED_TEXT_CHARS);
    expect(row.tags).toEqual(["a\ufffd", "\ufffdb", `"q"`]);
    // Readable as jsonb, which refuses \u0000 and lone surrogates.
    expect(row.as_jsonb).toEqual({ text: "x\ufffd\ufffd", "key\ufffd": 1, long: `${"y".repeat(MAX_STORED_TEXT_CHARS - 1)}…`, nested: [{ deep: "\ufffd" }] });
  }

  test("COPY stores them by the rule", async () => {
    const line = copyLineWriter<StoredRow>(COLUMNS, KINDS);
    await sql.begin((tx) => copyInto(tx as unknown as Sql, "stored", COLUMNS, [line(awkward("copied"))]));
    expectStorable(await readBack("copied"), "copied");
  });

  test("a JSON batch through json_to_recordset stores the same", async () => {
    const rows = jsonRowsWriter<StoredRow>(COLUMNS, KINDS);
    await sql.unsafe(
      `insert into stored (id, note, tags, doc)
       select id, note, array(select json_array_elements_text(tags)), doc::text from json_to_recordset($1::text::json) as r(id text, note text, tags json, doc json)`,
      [rows([awkward("inserted")])],
    );
    expectStorable(await readBack("inserted"), "inserted");
    const copied = await readBack("copied");
    const inserted = await readBack("inserted");
    expect({ ...inserted, id: "copied" } as unknown).toEqual({ ...copied } as unknown);
  });

  test("copyField and copyTextArray escape for COPY after making text storable", () => {
    expect(copyField("a\u0000\tb")).toBe("a\ufffd\\tb");
    expect(copyTextArray(["\u0000", 'q"\\'])).toBe('{"\ufffd","q\\\\"\\\\\\\\"}');
  });
});
