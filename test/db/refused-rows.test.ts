import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/db/connect-database";
import { WriteBuffer, type BatchTable } from "../../src/db/batch/write-buffer";
import { Metrics } from "../../src/observability/metrics";
import { createMigratedTestDatabase, type MigratedTestDatabase } from "../support/test-database";

/**
 * A flush the database refuses for its data: the refused rows are isolated and
 * dead-lettered, everything else commits. On scratch tables, so the splitting itself is
 * visible; the metering tables are in metering-refused-rows.test.ts.
 */
let sql: Sql;
let database: MigratedTestDatabase;
beforeAll(async () => {
  database = await createMigratedTestDatabase();
  sql = database.sql;
});
afterAll(() => database.close({ timeout: 1 }));

interface GroupedRow {
  id: string;
  group: string;
  n: number;
}

let tables = 0;
/** A scratch table that refuses n = 13 (a check constraint: 23514), idempotent on id; rows grouped by `group`. */
async function scratchTable(hooks: { beforeWrite?: (rows: GroupedRow[], call: number) => Promise<void> | void } = {}) {
  const name = `refusing_${++tables}`;
  await sql.unsafe(`create table ${name} (seq bigserial, id text primary key, grp text not null, n integer not null check (n <> 13))`);
  let calls = 0;
  const table: BatchTable<GroupedRow> = {
    name,
    async write(tx, rows) {
      await hooks.beforeWrite?.(rows, ++calls);
      await tx.unsafe(`insert into ${name} (id, grp, n) select * from unnest($1::text[], $2::text[], $3::int[]) on conflict (id) do nothing`, [
        rows.map((row) => row.id),
        rows.map((row) => row.group),
        rows.map((row) => row.n),
      ]);
    },
    groupKey: (row) => row.group,
  };
  return {
    name,
    table,
    get calls() {
      return calls;
    },
    committed: async () => (await sql.unsafe(`select id from ${name} order by seq`)).map((row) => row.id as string),
  };
}

/** `groups` groups of two rows each: `g<i>a`, `g<i>b`. */
function groupedRows(groups: number): GroupedRow[] {
  return Array.from({ length: groups }, (_, i) => [
    { id: `g${i}a`, group: `g${i}`, n: 100 + i },
    { id: `g${i}b`, group: `g${i}`, n: 100 + i },
  ]).flat();
}

async function deadLetters(table: string) {
  return sql.unsafe("select request_record_id, row_values, error_code, error_message from metering_dead_letters where table_name = $1 order by id", [table]);
}

describe("a batch the database refuses for its data", () => {
  test("is split until the refused row is isolated: everything else commits in order, its group's other row too, and the row is dead-lettered and counted", async () => {
    const scratch = await scratchTable();
    const metrics = new Metrics();
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000, metrics });
    const enqueue = writes.register(scratch.table);
    const rows = groupedRows(64);
    const refused = rows.find((row) => row.id === "g37b")!;
    refused.n = 13;
    for (const row of rows) enqueue(row);
    let written = false;
    writes.onWritten(() => (written = true));

    await writes.flush();

    expect(written).toBe(true);
    expect(await scratch.committed()).toEqual(rows.filter((row) => row !== refused).map((row) => row.id));
    const letters = await deadLetters(scratch.name);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ request_record_id: "g37", error_code: "23514" });
    expect(JSON.parse(letters[0]!.row_values as string)).toEqual(refused);
    expect(writes.stats()).toMatchObject({ buffered: { [scratch.name]: 0 }, written: { [scratch.name]: 127 }, deadLettered: { [scratch.name]: 1 }, failures: 1 });
    expect(metrics.render()).toContain(`switchyard_metering_dead_letters_total{table="${scratch.name}"} 1\n`);
    // 1 failed flush + 1 retry of the whole + ~2 per halving (log2 64 = 6) + 2 rows alone: far from one per row.
    expect(scratch.calls).toBeLessThanOrEqual(20);

    // The buffer carries on: the next flush is an ordinary one.
    enqueue({ id: "after", group: "after", n: 1 });
    await writes.flush();
    expect((await scratch.committed()).at(-1)).toBe("after");
    expect(writes.stats().failures).toBe(1);
    await writes.stop();
  });

  test("several refused rows in several groups are each isolated; a group refused as a whole is dead-lettered whole", async () => {
    const scratch = await scratchTable();
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000 });
    const enqueue = writes.register(scratch.table);
    const rows = groupedRows(20);
    for (const id of ["g0a", "g9a", "g9b", "g19b"]) rows.find((row) => row.id === id)!.n = 13;
    for (const row of rows) enqueue(row);
    await writes.flush();
    expect(await scratch.committed()).toEqual(rows.filter((row) => row.n !== 13).map((row) => row.id));
    const letters = await deadLetters(scratch.name);
    expect(letters.map((letter) => JSON.parse(letter.row_values as string).id).sort()).toEqual(["g0a", "g19b", "g9a", "g9b"]);
    expect(writes.stats().deadLettered[scratch.name]).toBe(4);
    await writes.stop();
  });

  test("a connection lost while isolating puts the unsettled rows back; the retry isolates again and every row lands exactly once", async () => {
    let failIsolationAt: number | undefined = 6;
    const scratch = await scratchTable({
      beforeWrite(_rows, call) {
        // 1: the refused flush; 2: the whole batch again; 3: groups 0–7; 4: 0–3; 5: 0–1 (commits);
        // 6: 2–3 "loses the connection".
        if (call === failIsolationAt) {
          failIsolationAt = undefined;
          throw Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" });
        }
      },
    });
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000, retryBaseMs: 5 });
    const enqueue = writes.register(scratch.table);
    const rows = groupedRows(16);
    rows.find((row) => row.id === "g3a")!.n = 13;
    for (const row of rows) enqueue(row);
    await expect(writes.flush()).rejects.toThrow("CONNECTION_CLOSED");
    // Groups 0 and 1 are settled; the other 28 rows are pending again.
    expect(writes.stats()).toMatchObject({ buffered: { [scratch.name]: 28 }, written: { [scratch.name]: 4 } });
    await writes.flush();
    expect(await scratch.committed()).toEqual(rows.filter((row) => row.n !== 13).map((row) => row.id));
    expect((await deadLetters(scratch.name)).map((letter) => letter.request_record_id)).toEqual(["g3"]);
    expect(writes.stats()).toMatchObject({ buffered: { [scratch.name]: 0 }, written: { [scratch.name]: 31 }, deadLettered: { [scratch.name]: 1 } });
    await writes.stop();
  });

  test("an outage is not mistaken for refused data: nothing is dead-lettered while the database is unreachable", async () => {
    const scratch = await scratchTable({
      beforeWrite(_rows, call) {
        if (call <= 2) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED", syscall: "connect" });
      },
    });
    const writes = new WriteBuffer(sql, { flushIntervalMs: 60_000, retryBaseMs: 5 });
    const enqueue = writes.register(scratch.table);
    for (const row of groupedRows(4)) enqueue(row);
    await expect(writes.flush()).rejects.toThrow("ECONNREFUSED");
    await expect(writes.flush()).rejects.toThrow("ECONNREFUSED");
    await writes.flush();
    expect(await scratch.committed()).toHaveLength(8);
    expect(await deadLetters(scratch.name)).toHaveLength(0);
    expect(writes.stats()).toMatchObject({ failures: 2, deadLettered: { [scratch.name]: 0 } });
    await writes.stop();
  });
});
