import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { randomBytes } from "node:crypto";
import type { Sql } from "../../src/db/connect-database";
import { WriteBuffer, type BatchTable, type DropReason, type WriteBufferOptions } from "../../src/db/batch/write-buffer";
import { ShardedWriteBuffer, shardIndex } from "../../src/db/batch/sharded-write-buffer";
import { Metrics } from "../../src/observability/metrics";
import { createTestDatabase } from "../support/test-database";

interface ScratchRow {
  id: string;
  n: number;
}

const cleanups: Array<() => Promise<void>> = [];
let sql: Sql;
let databaseUrl: string;

beforeAll(async () => {
  const database = await createTestDatabase();
  cleanups.push(database.drop);
  databaseUrl = database.url;
  sql = client(database.url);
});

afterAll(async () => {
  // Last registered first: buffers stop before their clients end, the database goes last.
  for (const cleanup of cleanups) await cleanup();
});

function client(url: string): Sql {
  const connection = postgres(url, { max: 4, onnotice: () => {}, connect_timeout: 2 }) as unknown as Sql;
  cleanups.unshift(() => connection.end({ timeout: 1 }));
  return connection;
}

function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString("hex")}`;
}

/** `seq` records commit order, so tests can assert that no row overtook another. */
async function createScratchTable(on: Sql, name: string): Promise<void> {
  await on.unsafe(`create table ${name} (seq bigserial, id text primary key, n integer not null)`);
}

interface WriteCall {
  rows: number;
  transactionId: string;
}

/**
 * A BatchTable over a scratch table: one unnest insert per chunk, idempotent on the id.
 * Records every completed write call with the id of the transaction it ran in;
 * `beforeWrite` sees every call, failed ones included, numbered from 1.
 */
function scratchTable(name: string, hooks: { beforeWrite?: (rows: ScratchRow[], call: number) => Promise<void> } = {}) {
  const calls: WriteCall[] = [];
  const dropped: Array<{ rows: readonly ScratchRow[]; reason: DropReason }> = [];
  let attempts = 0;
  const table: BatchTable<ScratchRow> = {
    name,
    async write(tx, rows) {
      await hooks.beforeWrite?.(rows, ++attempts);
      const [result] = await tx.unsafe(
        `with inserted as (
           insert into ${name} (id, n) select * from unnest($1::text[], $2::int[]) on conflict (id) do nothing returning 1)
         select pg_current_xact_id()::text as transaction_id`,
        [rows.map((row) => row.id), rows.map((row) => row.n)],
      );
      calls.push({ rows: rows.length, transactionId: String(result?.transaction_id) });
    },
    onDrop(rows, reason) {
      dropped.push({ rows, reason });
    },
  };
  return { table, calls, dropped };
}

function rowsNumbered(from: number, count: number, prefix = "r"): ScratchRow[] {
  return Array.from({ length: count }, (_, i) => ({ id: `${prefix}${from + i}`, n: from + i }));
}

/** The n column in commit order. */
async function committed(on: Sql, table: string): Promise<number[]> {
  const rows = await on.unsafe(`select n from ${table} order by seq`);
  return rows.map((row) => Number(row.n));
}

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > until) throw new Error("condition not reached in time");
    await Bun.sleep(5);
  }
}

function range(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

function buffer(on: Sql, options: WriteBufferOptions): WriteBuffer {
  const created = new WriteBuffer(on, { stopTimeoutMs: 1_000, ...options });
  cleanups.unshift(() => created.stop());
  return created;
}

describe("WriteBuffer batches", () => {
  test("2,500 buffered rows are written by one flush as three statements in one transaction, in order", async () => {
    const name = uniqueName("batched");
    await createScratchTable(sql, name);
    const { table, calls } = scratchTable(name);
    const writes = buffer(sql, { flushIntervalMs: 60_000, maxBatchRows: 1_000 });
    const enqueue = writes.register(table);
    for (const row of rowsNumbered(0, 2_500)) expect(enqueue(row)).toBe(true);
    await Promise.all([writes.flush(), writes.flush()]);
    expect(calls.map((call) => call.rows)).toEqual([1_000, 1_000, 500]);
    expect(new Set(calls.map((call) => call.transactionId)).size).toBe(1);
    expect(await committed(sql, name)).toEqual(range(0, 2_500));
    expect(writes.stats()).toMatchObject({ buffered: { [name]: 0 }, written: { [name]: 2_500 }, failures: 0 });
  });

  test("a table whose write streams (COPY) gets the whole flush in one call on a first attempt, and chunks of maxBatchRows on a retry", async () => {
    const name = uniqueName("streamed");
    await createScratchTable(sql, name);
    const { table, calls } = scratchTable(name, {
      async beforeWrite(_rows, call) {
        if (call === 2) throw new Error("failure 2");
      },
    });
    const writes = buffer(sql, { flushIntervalMs: 60_000, maxBatchRows: 1_000, retryBaseMs: 1 });
    const retries: boolean[] = [];
    const enqueue = writes.register({ ...table, streamsWholeBatch: true, write: (tx, rows, retry) => (retries.push(retry), table.write(tx, rows, retry)) });
    for (const row of rowsNumbered(0, 2_500)) enqueue(row);
    await writes.flush();
    for (const row of rowsNumbered(2_500, 2_500)) enqueue(row);
    await writes.flush().catch(() => {});
    await writes.whenWritten();
    // One call for the first flush; the second flush's one call fails, and its retry comes in chunks.
    expect(calls.map((call) => call.rows)).toEqual([2_500, 1_000, 1_000, 500]);
    expect(retries).toEqual([false, false, true, true, true]);
    expect(new Set(calls.slice(1).map((call) => call.transactionId)).size).toBe(1);
    expect(await committed(sql, name)).toEqual(range(0, 5_000));
  });

  test("several tables flush in one transaction in registration order, so a child row never lands without its parent", async () => {
    const parent = uniqueName("parent");
    const child = uniqueName("child");
    await createScratchTable(sql, parent);
    await sql.unsafe(`create table ${child} (seq bigserial, id text primary key references ${parent}(id), n integer not null)`);
    const parents = scratchTable(parent);
    const children = scratchTable(child);
    const writes = buffer(sql, { flushIntervalMs: 60_000 });
    const enqueueParent = writes.register(parents.table);
    const enqueueChild = writes.register(children.table);
    // The child is enqueued first; registration order still writes the parent first.
    for (const row of rowsNumbered(0, 10)) {
      enqueueChild(row);
      enqueueParent(row);
    }
    await writes.flush();
    expect(parents.calls[0]?.transactionId).toBe(children.calls[0]?.transactionId!);
    expect(await committed(sql, child)).toEqual(range(0, 10));
  });

  test("an interval flush writes a few rows after flushIntervalMs without being asked", async () => {
    const name = uniqueName("interval");
    await createScratchTable(sql, name);
    const { table, calls } = scratchTable(name);
    const writes = buffer(sql, { flushIntervalMs: 40, maxBatchRows: 1_000 });
    const enqueue = writes.register(table);
    const started = performance.now();
    for (const row of rowsNumbered(0, 5)) enqueue(row);
    await waitFor(async () => (await committed(sql, name)).length === 5);
    expect(performance.now() - started).toBeGreaterThanOrEqual(30);
    expect(calls.map((call) => call.rows)).toEqual([5]);
  });

  test("a table reaching maxBatchRows flushes at once, while fewer rows wait for the interval", async () => {
    const name = uniqueName("sized");
    await createScratchTable(sql, name);
    const { table, calls } = scratchTable(name);
    const writes = buffer(sql, { flushIntervalMs: 60_000, maxBatchRows: 100 });
    const enqueue = writes.register(table);
    for (const row of rowsNumbered(0, 100)) enqueue(row);
    // At once, not after the 60 s interval; the bound leaves a loaded machine room.
    await waitFor(async () => (await committed(sql, name)).length === 100, 15_000);
    for (const row of rowsNumbered(100, 99)) enqueue(row);
    await Bun.sleep(200);
    expect(writes.stats().buffered[name]).toBe(99);
    expect(calls.map((call) => call.rows)).toEqual([100]);
  });

  test("enqueue keeps accepting rows while a slow flush is running, and the next flush writes them", async () => {
    const name = uniqueName("slow");
    await createScratchTable(sql, name);
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { table } = scratchTable(name, { beforeWrite: (_rows, call) => (call === 1 ? gate : Promise.resolve()) });
    const writes = buffer(sql, { flushIntervalMs: 60_000 });
    const enqueue = writes.register(table);
    for (const row of rowsNumbered(0, 10)) enqueue(row);
    const first = writes.flush();
    await Bun.sleep(20);
    for (const row of rowsNumbered(10, 1_000)) expect(enqueue(row)).toBe(true);
    expect(writes.stats().buffered[name]).toBe(1_010);
    release();
    await first;
    await writes.flush();
    expect(await committed(sql, name)).toEqual(range(0, 1_010));
  });

  test("stop() writes everything still buffered, then refuses new rows", async () => {
    const name = uniqueName("stopping");
    await createScratchTable(sql, name);
    const { table, dropped } = scratchTable(name);
    const writes = buffer(sql, { flushIntervalMs: 60_000, maxBatchRows: 500 });
    const enqueue = writes.register(table);
    for (const row of rowsNumbered(0, 1_234)) enqueue(row);
    await writes.stop();
    expect(await committed(sql, name)).toEqual(range(0, 1_234));
    expect(enqueue({ id: "late", n: -1 })).toBe(false);
    expect(dropped).toEqual([{ rows: [{ id: "late", n: -1 }], reason: "stopped" }]);
    expect(writes.stats().rejected[name]).toBe(1);
  });
});

describe("WriteBuffer failures", () => {
  test("while the database does not exist rows stay buffered and failures are counted with backoff; once it exists every row arrives exactly once, in order", async () => {
    const adminUrl = process.env.TEST_DATABASE_URL!;
    const missing = uniqueName("later");
    const url = new URL(adminUrl);
    url.pathname = `/${missing}`;
    const admin = client(adminUrl);
    cleanups.unshift(async () => void (await admin.unsafe(`drop database if exists ${missing} with (force)`)));
    const outageSql = client(url.toString());
    const metrics = new Metrics();
    const writes = buffer(outageSql, { flushIntervalMs: 5, maxBatchRows: 100, retryBaseMs: 20, retryMaxMs: 80, metrics });
    const { table, calls } = scratchTable("requests");
    const enqueue = writes.register(table);

    for (const row of rowsNumbered(0, 300)) enqueue(row);
    await waitFor(() => writes.stats().failures >= 3);
    const started = performance.now();
    const failuresBefore = writes.stats().failures;
    for (const row of rowsNumbered(300, 200)) enqueue(row);
    await waitFor(() => writes.stats().failures >= failuresBefore + 3);
    // Backoff of 20, 40, 80, 80 … ms: three more attempts wait at least two full 80 ms
    // delays (a hot loop takes a few ms). Bounded from below in time, not counted in a fixed
    // window, so a slow machine makes the test slower, never wrong.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * 80);
    expect(writes.stats().buffered.requests).toBe(500);
    expect(calls).toHaveLength(0);
    expect(metrics.render()).toContain(`switchyard_write_failures_total{table="requests"} ${writes.stats().failures}`);
    expect(metrics.render()).toContain(`switchyard_buffered_rows{table="requests"} 500`);
    // A failed flush is not a flush's duration: only committed ones are timed.
    expect(metrics.render()).not.toContain("switchyard_write_flush_seconds_count");

    await admin.unsafe(`create database ${missing}`);
    const recovered = client(url.toString());
    await recovered.unsafe(`create table requests (seq bigserial, id text primary key, n integer not null)`);
    await waitFor(() => writes.stats().buffered.requests === 0);
    expect(await committed(recovered, "requests")).toEqual(range(0, 500));
    expect(writes.stats().written.requests).toBe(500);
    expect(metrics.render()).toMatch(/^switchyard_write_flush_seconds_count [1-9]\d*$/m);
  });

  test("a batch that committed but reported failure is written again without duplicates", async () => {
    const name = uniqueName("ack_lost");
    await createScratchTable(sql, name);
    const outside = client(databaseUrl);
    const { table, calls } = scratchTable(name, {
      async beforeWrite(rows, call) {
        if (call !== 1) return;
        // Commits on another connection, then fails: as if the commit's acknowledgement was lost.
        await outside.unsafe(`insert into ${name} (id, n) select * from unnest($1::text[], $2::int[])`, [rows.map((r) => r.id), rows.map((r) => r.n)]);
        throw new Error("connection lost after commit");
      },
    });
    const writes = buffer(sql, { flushIntervalMs: 60_000 });
    const enqueue = writes.register(table);
    for (const row of rowsNumbered(0, 50)) enqueue(row);
    await expect(writes.flush()).rejects.toThrow("connection lost after commit");
    expect(writes.stats().buffered[name]).toBe(50);
    await writes.flush();
    expect(await committed(sql, name)).toEqual(range(0, 50));
    expect(writes.stats()).toMatchObject({ failures: 1, written: { [name]: 50 }, buffered: { [name]: 0 } });
  });

  test("writes are marked as retries from the first failed flush until one succeeds, so non-idempotent fast paths (COPY) are skipped exactly then", async () => {
    const name = uniqueName("retry_flag");
    await createScratchTable(sql, name);
    const seen: boolean[] = [];
    const { table } = scratchTable(name, {
      async beforeWrite(_rows, call) {
        if (call === 2 || call === 3) throw new Error(`failure ${call}`);
      },
    });
    const writes = buffer(sql, { flushIntervalMs: 60_000 });
    const enqueue = writes.register({ ...table, write: (tx, rows, retry) => (seen.push(retry), table.write(tx, rows, retry)) });
    for (let round = 0; round < 5; round++) {
      enqueue({ id: `f${round}`, n: round });
      await writes.flush().catch(() => {});
    }
    // call 1 ok; 2 fails; 3 (a retry) fails; 4 (a retry) succeeds; 5 is a first attempt again.
    expect(seen).toEqual([false, false, true, true, false]);
    expect(await committed(sql, name)).toEqual([0, 1, 2, 3, 4]);
  });

  test("whenWritten resolves once the rows enqueued before it are committed, waits through a failed flush, and is released by stop()", async () => {
    const name = uniqueName("when_written");
    await createScratchTable(sql, name);
    let failNext = false;
    const { table } = scratchTable(name, {
      async beforeWrite() {
        if (failNext) {
          failNext = false;
          throw new Error("flush fails once");
        }
      },
    });
    const writes = buffer(sql, { flushIntervalMs: 60_000, retryBaseMs: 60_000 });
    const enqueue = writes.register(table);
    await writes.whenWritten(); // nothing pending: at once
    enqueue({ id: "w1", n: 1 });
    let written = false;
    const waiter = writes.whenWritten().then(() => (written = true));
    await Bun.sleep(20);
    expect(written).toBe(false);
    failNext = true;
    await writes.flush().catch(() => {});
    await Bun.sleep(20);
    expect(written).toBe(false); // the flush failed: the row is pending again, and so is the waiter
    await writes.flush();
    await waiter;
    expect(await committed(sql, name)).toEqual([1]);
    // While a flush runs, a waiter with nothing newer pending waits for that flush.
    enqueue({ id: "w2", n: 2 });
    const running = writes.flush();
    let second = false;
    const during = writes.whenWritten().then(() => (second = true));
    await running;
    await during;
    expect(second).toBe(true);
    // A database that never answers: stop() gives up and releases whoever waits.
    const dead = new WriteBuffer(client("postgres://nobody@127.0.0.1:1/none"), { flushIntervalMs: 60_000, stopTimeoutMs: 200, retryBaseMs: 10 });
    dead.register(scratchTable(uniqueName("dead")).table)({ id: "x", n: 0 });
    const released = dead.whenWritten();
    await dead.stop();
    await released;
  });

  test("a flush failing mid-way rolls back every table and puts its rows back in front of newer rows, in order", async () => {
    const first = uniqueName("first");
    const second = uniqueName("second");
    await createScratchTable(sql, first);
    await createScratchTable(sql, second);
    let enqueueFirst: (row: ScratchRow) => boolean = () => false;
    const firsts = scratchTable(first);
    const seconds = scratchTable(second, {
      async beforeWrite(_rows, call) {
        if (call !== 2) return;
        // Rows arriving while the flush runs must end up after the failed batch.
        for (const row of rowsNumbered(2_500, 10)) enqueueFirst(row);
        throw new Error("statement failed");
      },
    });
    const writes = buffer(sql, { flushIntervalMs: 60_000, maxBatchRows: 1_000 });
    enqueueFirst = writes.register(firsts.table);
    const enqueueSecond = writes.register(seconds.table);
    for (const row of rowsNumbered(0, 2_500)) {
      enqueueFirst(row);
      enqueueSecond(row);
    }
    await expect(writes.flush()).rejects.toThrow("statement failed");
    expect(await committed(sql, first)).toEqual([]);
    expect(writes.stats().buffered).toEqual({ [first]: 2_510, [second]: 2_500 });
    await writes.flush();
    expect(await committed(sql, first)).toEqual(range(0, 2_510));
    expect(await committed(sql, second)).toEqual(range(0, 2_500));
  });

  test("beyond maxBufferedRows new rows are refused and counted, and accepted again once the buffer drains", async () => {
    const name = uniqueName("bounded");
    await createScratchTable(sql, name);
    const metrics = new Metrics();
    const { table, dropped } = scratchTable(name);
    const writes = buffer(sql, { flushIntervalMs: 60_000, maxBufferedRows: 50, metrics });
    const enqueue = writes.register(table);
    const accepted = rowsNumbered(0, 60).map((row) => enqueue(row));
    expect(accepted.filter(Boolean)).toHaveLength(50);
    expect(accepted.slice(50)).toEqual(Array(10).fill(false));
    expect(dropped.map((drop) => drop.reason)).toEqual(Array(10).fill("buffer_full"));
    expect(dropped.flatMap((drop) => drop.rows.map((row) => row.n))).toEqual(range(50, 10));
    expect(writes.stats()).toMatchObject({ buffered: { [name]: 50 }, rejected: { [name]: 10 } });
    expect(metrics.render()).toContain(`switchyard_write_rejected_rows_total{table="${name}"} 10`);
    await writes.flush();
    expect(enqueue({ id: "after", n: 1_000 })).toBe(true);
    await writes.flush();
    expect(await committed(sql, name)).toEqual([...range(0, 50), 1_000]);
  });

  test("stop() gives up after stopTimeoutMs on an unreachable database and hands the lost rows to onDrop", async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${uniqueName("never")}`;
    // A second is room for two failed attempts (each a connection refused by PostgreSQL, slow
    // on a loaded machine) with a 20 ms backoff between.
    const writes = new WriteBuffer(client(url.toString()), { flushIntervalMs: 60_000, retryBaseMs: 20, stopTimeoutMs: 1_000 });
    const { table, dropped } = scratchTable("requests");
    const enqueue = writes.register(table);
    for (const row of rowsNumbered(0, 10)) enqueue(row);
    const started = performance.now();
    await writes.stop();
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(950);
    // It gave up: retrying on (or waiting for a database that never comes) would not end.
    expect(took).toBeLessThan(8_000);
    expect(writes.stats().failures).toBeGreaterThanOrEqual(2);
    expect(writes.stats().buffered.requests).toBe(0);
    expect(dropped.map((drop) => drop.reason)).toEqual(["stopped"]);
    expect(dropped[0]?.rows.map((row) => row.n)).toEqual(range(0, 10));
  });
});

/** Two keys that hash to different shards of two, and more keys for each. */
function keysByShard(count: number): [string[], string[]] {
  const shards: [string[], string[]] = [[], []];
  for (let i = 0; shards[0].length < count || shards[1].length < count; i++) {
    const key = `acct_${i}`;
    const list = shards[shardIndex(key, 2)]!;
    if (list.length < count) list.push(key);
  }
  return shards;
}

function sharded(on: Sql, shards: number, options: WriteBufferOptions): ShardedWriteBuffer {
  const created = new ShardedWriteBuffer(on, shards, { stopTimeoutMs: 1_000, ...options });
  cleanups.unshift(() => created.stop());
  return created;
}

describe("ShardedWriteBuffer", () => {
  test("rows of one key stay in one shard, in enqueue order; the shards write in separate transactions", async () => {
    const name = uniqueName("sharded");
    await createScratchTable(sql, name);
    const { table, calls } = scratchTable(name);
    const writes = sharded(sql, 2, { flushIntervalMs: 60_000 });
    const keyOf = (row: { id: string }) => row.id.slice(0, row.id.indexOf(":"));
    const enqueue = writes.register(table, keyOf);
    const [left, right] = keysByShard(3);
    const keys = [...left, ...right];
    for (let n = 0; n < 60; n++) enqueue({ id: `${keys[n % keys.length]}:${n}`, n });
    await writes.flush();
    expect(new Set(calls.map((call) => call.transactionId)).size).toBe(2);
    const rows = await sql.unsafe(`select id, n, xmin::text as transaction from ${name} order by seq`);
    for (const key of keys) {
      const own = rows.filter((row) => keyOf(row as unknown as ScratchRow) === key);
      expect(own.map((row) => Number(row.n))).toEqual(range(0, 60).filter((n) => keys[n % keys.length] === key));
      expect(new Set(own.map((row) => row.transaction)).size).toBe(1);
    }
    // Keys of the same shard share its transaction; keys of different shards do not.
    const transactionOf = (key: string) => rows.find((row) => keyOf(row as unknown as ScratchRow) === key)!.transaction;
    expect(new Set(left.map(transactionOf)).size).toBe(1);
    expect(new Set(right.map(transactionOf)).size).toBe(1);
    expect(transactionOf(left[0]!)).not.toBe(transactionOf(right[0]!));
    expect(writes.stats()).toMatchObject({ buffered: { [name]: 0 }, written: { [name]: 60 }, rejected: { [name]: 0 }, failures: 0 });
  });

  test("a shard stuck on a slow write holds back only its own keys; whenWritten waits for every shard", async () => {
    const name = uniqueName("sharded_slow");
    await createScratchTable(sql, name);
    const [[slowKey], [fastKey]] = keysByShard(1);
    let release: () => void = () => {};
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const { table } = scratchTable(name, {
      async beforeWrite(rows) {
        if (rows.some((row) => row.id.startsWith(`${slowKey}:`))) await stuck;
      },
    });
    const writes = sharded(sql, 2, { flushIntervalMs: 5 });
    const enqueue = writes.register(table, (row) => row.id.slice(0, row.id.indexOf(":")));
    enqueue({ id: `${slowKey}:1`, n: 1 });
    enqueue({ id: `${fastKey}:2`, n: 2 });
    let allWritten = false;
    const waiter = writes.whenWritten().then(() => (allWritten = true));
    const written: string[] = [];
    writes.onWritten(slowKey!, () => written.push("slow"));
    writes.onWritten(fastKey!, () => written.push("fast"));
    await waitFor(async () => (await committed(sql, name)).includes(2));
    expect(await committed(sql, name)).toEqual([2]);
    await waitFor(() => written.length > 0);
    expect(written).toEqual(["fast"]);
    expect(allWritten).toBe(false);
    expect(writes.stats().buffered[name]).toBe(1);
    release();
    await waiter;
    expect(await committed(sql, name)).toEqual([2, 1]);
    expect(written).toEqual(["fast", "slow"]);
    // Nothing pending: the callback runs at once.
    writes.onWritten(slowKey!, () => written.push("now"));
    expect(written.at(-1)).toBe("now");
  });

  test("metrics show one series per table, summed over the shards; one shard is a plain WriteBuffer", async () => {
    const name = uniqueName("sharded_metrics");
    await createScratchTable(sql, name);
    const metrics = new Metrics();
    const writes = sharded(sql, 2, { flushIntervalMs: 60_000, metrics });
    const enqueue = writes.register(scratchTable(name).table, (row) => row.id.slice(0, row.id.indexOf(":")));
    const [left, right] = keysByShard(1);
    for (let n = 0; n < 5; n++) enqueue({ id: `${left[0]}:${n}`, n });
    for (let n = 5; n < 8; n++) enqueue({ id: `${right[0]}:${n}`, n });
    const series = metrics.render().split("\n").filter((line) => line.startsWith(`switchyard_buffered_rows{table="${name}"}`));
    expect(series).toEqual([`switchyard_buffered_rows{table="${name}"} 8`]);
    await writes.flush();
    expect(metrics.render()).toContain(`switchyard_buffered_rows{table="${name}"} 0`);
    // Each shard committed one flush, timed into the one histogram.
    expect(metrics.render()).toContain("switchyard_write_flush_seconds_count 2");
    expect(() => new ShardedWriteBuffer(sql, 0)).toThrow("at least one shard");
    expect(new ShardedWriteBuffer(sql, 1).shardCount).toBe(1);
  });

  test("shardIndex is stable and spreads keys over every shard", () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i++) {
      const index = shardIndex(`acct_${i.toString(36)}`, 3);
      expect(index).toBe(shardIndex(`acct_${i.toString(36)}`, 3));
      counts[index]!++;
    }
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });
});
