import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { binaryRowsEncoder, copyBinaryInto, type BinaryColumnType } from "../../src/db/copy-binary";
import { copyInto, copyLineWriter } from "../../src/db/copy-rows";
import { createTestDatabase } from "../support/test-database";

let sql: Sql;
let drop: () => Promise<void>;
beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  sql = postgres(database.url, { max: 2, onnotice: () => {} }) as unknown as Sql;
  for (const table of ["as_text", "as_binary"]) {
    await sql.unsafe(
      `create table ${table} (id text primary key, note text, small integer, big bigint, flag boolean, tags text[], doc text, at timestamptz)`,
    );
  }
});
afterAll(async () => {
  await sql.end({ timeout: 1 });
  await drop();
});

interface Row {
  id: string;
  note: string | null;
  small: number | null;
  big: number | null;
  flag: boolean | null;
  tags: string[] | null;
  doc: unknown;
  at: string | null;
}
const COLUMNS = ["id", "note", "small", "big", "flag", "tags", "doc", "at"] as const;
const TYPES: Record<(typeof COLUMNS)[number], BinaryColumnType> = {
  id: "text", note: "text", small: "int4", big: "int8", flag: "bool", tags: "text[]", doc: "json", at: "timestamptz",
};
const line = copyLineWriter<Row>(COLUMNS, { tags: "text[]", doc: "json" });
const encode = binaryRowsEncoder<Row>(COLUMNS, TYPES);

const AWKWARD: Row[] = [
  { id: "tabs\tand\nnewlines\r\\", note: "NUL \u0000 here, lone \ud800 and \udc00 surrogates, a pair 🚀, é", small: -2_147_483_648, big: -9_007_199_254_740_991, flag: true, tags: ["a,b", 'q"uote', "back\\slash", "{brace}", "NULL", "", "nul\u0000", "lone\udfff"], doc: { text: "line\nbreak\ttab \\ \"q\" é 🚀 \u0000 \ud800", nested: [1, null, { deep: true }] }, at: "2026-11-22T01:02:03.456Z" },
  { id: "nulls", note: null, small: null, big: null, flag: null, tags: null, doc: null, at: null },
  { id: "empties", note: "", small: 0, big: 0, flag: false, tags: [], doc: [], at: "1999-12-31T23:59:59.999Z" },
  { id: "limits", note: "x".repeat(10_000), small: 2_147_483_647, big: 9_007_199_254_740_991, flag: false, tags: ["y".repeat(5_000)], doc: { long: "z".repeat(70_000) }, at: "2000-01-01T00:00:00.000Z" },
  // Timestamps within one second and across seconds (the encoder reuses the last second it parsed).
  ...["2026-11-22T01:02:03.000Z", "2026-11-22T01:02:03.001Z", "2026-11-22T01:02:03.999Z", "2026-11-22T01:02:04.010Z", "2026-11-22T01:02:03.500Z", "1969-12-31T23:59:59.250Z", "1969-12-31T23:59:59.999Z"].map(
    (at, i): Row => ({ id: `at${i}`, note: null, small: null, big: null, flag: null, tags: null, doc: null, at }),
  ),
  { id: "\\N", note: "\\N", small: 1, big: 4_294_967_296, flag: true, tags: ["\\N"], doc: "just a string", at: "2126-01-01T00:00:00.001Z" },
];

async function stored(table: string): Promise<unknown[]> {
  return sql.unsafe(`select id, note, small, big::text as big, flag, tags, doc, at::text as at from ${table} order by id collate "C"`);
}

describe("COPY binary format", () => {
  test("stores every awkward value exactly as a text COPY line stores it", async () => {
    const tuples = encode(AWKWARD);
    expect(tuples).toBeDefined();
    await sql.begin((tx) => copyInto(tx as unknown as Sql, "as_text", COLUMNS, AWKWARD.map(line)));
    await sql.begin((tx) => copyBinaryInto(tx as unknown as Sql, "as_binary", COLUMNS, [tuples!]));
    const [asText, asBinary] = [await stored("as_text"), await stored("as_binary")];
    expect(asBinary).toHaveLength(AWKWARD.length);
    expect(asBinary).toEqual(asText);
    const nul = asBinary.find((row) => (row as Row).id === AWKWARD[0]!.id) as Row;
    expect(nul.note).toBe("NUL \ufffd here, lone \ufffd and \ufffd surrogates, a pair 🚀, é");
    expect(nul.tags).toContain("lone\ufffd");
    expect(nul.small).toBe(-2_147_483_648);
  });

  test("a batch in several chunks goes through one COPY", async () => {
    const rows = Array.from({ length: 3_000 }, (_, i): Row => ({ id: `bulk${i}`, note: `n${i}`, small: i, big: -i * 1_000_000_007, flag: i % 2 === 0, tags: ["x"], doc: { i }, at: "2026-11-22T00:00:00.000Z" }));
    const chunks = [rows.slice(0, 1_000), rows.slice(1_000, 2_000), rows.slice(2_000)].map((chunk) => encode(chunk)!);
    await sql.begin((tx) => copyBinaryInto(tx as unknown as Sql, "as_binary", COLUMNS, chunks));
    const [count] = await sql.unsafe("select count(*)::int as c, sum(big)::text as total from as_binary where id like 'bulk%'");
    expect({ ...count }).toEqual({ c: 3_000, total: String((-(2_999 * 3_000) / 2) * 1_000_000_007) });
  });

  test("a COPY of chunks that take long to encode lets the event loop turn, in slices of several chunks", async () => {
    // 40 chunks, each holding the thread 1 ms as it is encoded: 40 ms of work in one COPY.
    const CHUNKS = 40;
    let encoded = 0;
    function* slowChunks(): Generator<Uint8Array> {
      for (let i = 0; i < CHUNKS; i++) {
        const until = performance.now() + 1;
        while (performance.now() < until) {
          // encoding
        }
        encoded++;
        yield encode([{ ...AWKWARD[2]!, id: `slow${i}` }])!;
      }
    }
    // Each turn of the loop the COPY allows, counted by an immediate that re-arms itself.
    const turnsAt: number[] = [];
    let counting = true;
    const count = () => {
      if (!counting) return;
      if (encoded > 0 && encoded < CHUNKS) turnsAt.push(encoded);
      setImmediate(count);
    };
    setImmediate(count);
    await sql.begin((tx) => copyBinaryInto(tx as unknown as Sql, "as_binary", COLUMNS, slowChunks()));
    counting = false;
    const [stored] = await sql.unsafe<{ c: number }[]>("select count(*)::int as c from as_binary where id like 'slow%'");
    expect(stored?.c).toBe(CHUNKS);
    const turnsDuring = new Set(turnsAt).size;
    // Not held for all 40 ms (it turns every few ms) …
    expect(turnsDuring).toBeGreaterThanOrEqual(4);
    // … and not after every chunk, which under load stretched a flush to a wave of requests a chunk.
    expect(turnsDuring).toBeLessThanOrEqual(CHUNKS * 0.75);
  });

  test("a value whose binary form could differ from its text form gives up on the batch (the caller sends text)", () => {
    const good = AWKWARD[2]!;
    expect(encode([good])).toBeDefined();
    for (const bad of [
      { ...good, small: 1.5 },
      { ...good, small: 2_147_483_648 },
      { ...good, big: 2 ** 53 },
      { ...good, big: Number.NaN },
      { ...good, at: "2026-11-22 01:02:03+05" },
      { ...good, note: 42 as unknown as string },
      { ...good, flag: "true" as unknown as boolean },
      { ...good, tags: [null] as unknown as string[] },
    ]) {
      expect(encode([good, bad])).toBeUndefined();
    }
  });

  test("a refused binary COPY rejects with PostgreSQL's error and leaves the pool usable", async () => {
    const duplicate = encode([{ ...AWKWARD[2]!, id: "dup" }, { ...AWKWARD[2]!, id: "dup" }])!;
    const error = await sql.begin((tx) => copyBinaryInto(tx as unknown as Sql, "as_binary", COLUMNS, [duplicate])).catch((caught: unknown) => caught);
    expect((error as { code?: string }).code).toBe("23505");
    const [row] = await sql.unsafe("select count(*)::int as n from as_binary where id = 'dup'");
    expect(row!.n).toBe(0);
  });
});
