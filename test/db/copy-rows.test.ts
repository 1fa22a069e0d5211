import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { copyField, copyInto, copyLineWriter, copyTextArray } from "../../src/db/copy-rows";
import { createTestDatabase } from "../support/test-database";

let sql: Sql;
let databaseUrl: string;
let drop: () => Promise<void>;
beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  databaseUrl = database.url;
  sql = postgres(database.url, { max: 2, onnotice: () => {} }) as unknown as Sql;
  await sql.unsafe("create table copied (id text primary key, n bigint, flag boolean, tags text[], doc json, at timestamptz)");
  await sql.unsafe("create table followed (id text)");
});
afterAll(async () => {
  await sql.end({ timeout: 1 });
  await drop();
});

interface Copied {
  id: string;
  n: number | null;
  flag: boolean;
  tags: string[];
  doc: unknown;
  at: string;
}
const COLUMNS = ["id", "n", "flag", "tags", "doc", "at"] as const;
const line = copyLineWriter<Copied>(COLUMNS, { tags: "text[]", doc: "json" });

describe("COPY text format", () => {
  test("fields escape backslash, newline, CR and tab; null is \\N; other values as they print", () => {
    expect(copyField("plain")).toBe("plain");
    expect(copyField("a\\b\nc\rd\te")).toBe("a\\\\b\\nc\\rd\\te");
    expect(copyField(null)).toBe("\\N");
    expect(copyField(undefined)).toBe("\\N");
    expect(copyField(42)).toBe("42");
    expect(copyField(false)).toBe("false");
    expect(copyTextArray([])).toBe("{}");
    expect(copyTextArray(['a"b', "c,d"])).toBe('{"a\\\\"b","c,d"}');
  });

  test("a column name that is not a plain identifier is refused (names are compiled into the line writer)", () => {
    expect(() => copyLineWriter<Record<string, unknown>>(["ok", "x); evil("], {})).toThrow("not a plain column name");
  });

  test("a line has the columns in order, tab-separated, newline-terminated", () => {
    const at = "2026-11-22T00:00:00.000Z";
    expect(line({ id: "x", n: null, flag: true, tags: ["t"], doc: { k: 1 }, at })).toBe(`x\t\\N\ttrue\t{"t"}\t{"k":1}\t${at}\n`);
  });
});

describe("copyInto", () => {
  test("every awkward value arrives exactly as sent", async () => {
    const rows: Copied[] = [
      { id: "tabs\tand\nnewlines", n: 9_007_199_254_740_991, flag: true, tags: ["a,b", 'q"uote', "back\\slash", "{brace}", "NULL"], doc: { text: "line\nbreak\ttab \\ \"q\" é 🚀", nested: [1, null, { deep: true }] }, at: "2026-11-22T01:02:03.456Z" },
      { id: "empty", n: null, flag: false, tags: [], doc: [], at: "2026-11-22T00:00:00.000Z" },
      { id: "\\N", n: 0, flag: false, tags: [""], doc: "just a string", at: "2026-01-01T00:00:00.000Z" },
    ];
    await sql.begin((tx) => copyInto(tx as unknown as Sql, "copied", COLUMNS, rows.map(line)));
    const read = await sql.unsafe("select id, n::text as n, flag, tags, doc, at from copied order by id");
    const byId = new Map(read.map((row) => [row.id as string, row]));
    for (const row of rows) {
      const got = byId.get(row.id)!;
      expect(got).toBeDefined();
      expect(got.n).toBe(row.n === null ? null : String(row.n));
      expect(got.flag).toBe(row.flag);
      expect(got.tags).toEqual(row.tags);
      expect(got.doc).toEqual(row.doc);
      expect((got.at as Date).toISOString()).toBe(row.at);
    }
  });

  test("a COPY the server refuses rejects (it does not hang), rolls back, and leaves the pool usable", async () => {
    const before = Number((await sql.unsafe("select count(*) as c from copied"))[0]!.c);
    const duplicate = { id: "dup", n: 1, flag: true, tags: [], doc: {}, at: "2026-11-22T00:00:00.000Z" };
    await sql.begin((tx) => copyInto(tx as unknown as Sql, "copied", COLUMNS, [line(duplicate)]));
    const outcome = await Promise.race([
      sql.begin(async (tx) => {
        await copyInto(tx as unknown as Sql, "copied", COLUMNS, [line({ ...duplicate, id: "fresh" }), line(duplicate)]);
      }).then(() => "committed", (error: unknown) => `rejected: ${String(error)}`),
      Bun.sleep(5_000).then(() => "hung"),
    ]);
    expect(outcome).toStartWith("rejected");
    // Nothing of the failed batch landed, and both pooled connections still answer.
    expect(Number((await sql.unsafe("select count(*) as c from copied"))[0]!.c)).toBe(before + 1);
    expect((await sql.unsafe("select count(*) as c from copied where id = 'fresh'"))[0]!.c).toBe("0");
    const answers = await Promise.all([sql.unsafe("select 1 as x"), sql.unsafe("select 2 as x")]);
    expect(answers.map((rows) => rows[0]!.x)).toEqual([1, 2]);
  });

  test("the statements that follow a COPY (`then`) go with its confirmation: they commit with it, and a refused COPY throws its own error, not theirs", async () => {
    const row = (id: string): Copied => ({ id, n: 1, flag: true, tags: [], doc: {}, at: "2026-11-22T00:00:00.000Z" });
    const followedIds = async () => (await sql.unsafe("select id from followed order by id")).map((r) => r.id as string);
    const copyThenInsert = (tx: Sql, rows: Copied[], followUp: string, calls: string[]) =>
      copyInto(tx, "copied", COLUMNS, rows.map(line), "text", () => {
        calls.push(followUp);
        return [tx.unsafe("insert into followed values ($1)", [followUp]), tx.unsafe("select $1::text as id", [followUp])];
      });

    const calls: string[] = [];
    await sql.begin((tx) => copyThenInsert(tx as unknown as Sql, [row("then-a")], "a", calls));
    expect(await followedIds()).toEqual(["a"]);

    // What copyInto itself throws, read inside the transaction, and whether the transaction
    // committed. (A refused COPY's own error reaches no promise postgres.js gives: its COPY query
    // had resolved with the writable, so a transaction whose callback swallows copyInto's error
    // reports the next statement's 25P02. Only copyInto's error names the refused data.)
    const outcome = async (copy: (tx: Sql) => Promise<void>) => {
      let thrown: string | undefined;
      const transaction = await sql
        .begin(async (tx) => {
          thrown = await copy(tx as unknown as Sql).then(
            () => "nothing",
            (error: { code?: string }) => error.code,
          );
        })
        .then(
          () => "committed",
          (error: { code?: string }) => error.code,
        );
      return { thrown, transaction };
    };

    // Refused: `then` was still called (its statements were made before the COPY's outcome
    // was known), they failed with the transaction, and the error is the COPY's duplicate key.
    const refused = await outcome((tx) => copyThenInsert(tx, [row("then-b"), row("then-a")], "b", calls));
    expect(refused.thrown).toBe("23505");
    expect(refused.transaction).not.toBe("committed");
    expect(calls).toEqual(["a", "b"]);
    expect(await followedIds()).toEqual(["a"]);

    // The COPY went in, a follow-up failed: its error, and nothing of the transaction stays.
    const failed = await outcome((tx) => copyInto(tx, "copied", COLUMNS, [line(row("then-c"))], "text", () => [tx.unsafe("insert into followed values ('c')"), tx.unsafe("select 1 / 0")]));
    expect(failed.thrown).toBe("22012");
    expect(failed.transaction).not.toBe("committed");
    expect(await followedIds()).toEqual(["a"]);
    expect((await sql.unsafe("select count(*)::int as c from copied where id in ('then-b', 'then-c')"))[0]!.c).toBe(0);
  });

  test("a refused COPY of a batch larger than the socket buffers rejects; it never hangs", async () => {
    // The server refuses the first line while the rest is still being sent.
    const rows = Array.from({ length: 30_000 }, (_, i): Copied => ({ id: i === 0 ? "dup" : `big${i}`, n: i, flag: true, tags: ["x".repeat(40)], doc: { pad: "y".repeat(200) }, at: "2026-11-22T00:00:00.000Z" }));
    const outcome = await Promise.race([
      sql.begin((tx) => copyInto(tx as unknown as Sql, "copied", COLUMNS, rows.map(line))).then(() => "committed", (error: unknown) => `rejected: ${String(error)}`),
      Bun.sleep(10_000).then(() => "hung"),
    ]);
    expect(outcome).toStartWith("rejected");
    expect((await sql.unsafe("select count(*)::int as c from copied where id like 'big%'"))[0]!.c).toBe(0);
  });

  test("a connection killed in the middle of a large COPY rejects; it never hangs, and the process lives on", async () => {
    // In a process of its own, guarded as src/main.ts guards the server (a test runner has its own handlers).
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "../support/copy-killed-connection.ts"), databaseUrl], { stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect(stderr).not.toContain("uncaught");
    expect(exitCode).toBe(0);
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!) as { outcome: string; escaped: string[] };
    // It may have finished before the kill on a fast machine; it must never hang.
    expect(["rejected", "committed"]).toContain(report.outcome);
    expect(report.escaped).toEqual([]);
  }, 30_000);

  test("a large batch (20,000 lines) goes through in one COPY", async () => {
    const rows = Array.from({ length: 20_000 }, (_, i): Copied => ({ id: `bulk${i}`, n: i, flag: i % 2 === 0, tags: ["x"], doc: { i }, at: "2026-11-22T00:00:00.000Z" }));
    await sql.begin((tx) => copyInto(tx as unknown as Sql, "copied", COLUMNS, rows.map(line)));
    const [count] = await sql.unsafe("select count(*)::int as c, sum(n)::text as total from copied where id like 'bulk%'");
    expect({ ...count }).toEqual({ c: 20_000, total: String((19_999 * 20_000) / 2) });
  });
});
