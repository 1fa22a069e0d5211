import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/db/connect-database";
import { LastUsedTracker } from "../../src/auth/last-used-tracker";
import { archiveNamespace } from "../../src/db/queries/namespaces";
import { createMigratedTestDatabase, type MigratedTestDatabase } from "../support/test-database";

let database: MigratedTestDatabase;
let sql: Sql;
beforeAll(async () => {
  database = await createMigratedTestDatabase();
  sql = database.sql;
});
afterAll(() => database.close());

test("instances flushing the same keys at once never deadlock, and the latest use wins", async () => {
  // Every instance flushes the keys its requests used; with several instances the batches
  // overlap. Rows locked in a different order by two of them deadlock, and PostgreSQL
  // fails one flush (its batch waits for the next tick).
  await sql`insert into accounts (id, email) values ('acct_lu', 'lu@example.test')`;
  const keys = Array.from({ length: 200 }, (_, i) => `key_lu_${String(i).padStart(3, "0")}`);
  for (const id of keys) {
    await sql`insert into api_keys (id, account_id, display_name, key_prefix, token_hash, scopes) values (${id}, 'acct_lu', 'k', 'p', ${Buffer.alloc(32)}, ${["inference:invoke"]})`;
  }
  const instances = [new LastUsedTracker(sql), new LastUsedTracker(sql), new LastUsedTracker(sql)];
  let failedFlushes = 0;
  const base = Date.UTC(2026, 0, 1);
  let latest = base;
  for (let round = 0; round < 40; round++) {
    instances.forEach((tracker, n) => {
      // Each instance notes the keys in its own order, as its requests happened to come.
      const order = n === 0 ? keys : n === 1 ? [...keys].reverse() : keys.slice(100).concat(keys.slice(0, 100));
      for (const id of order) tracker.note(id, (latest = base + round * 1_000 + n));
    });
    const written = await Promise.all(instances.map((tracker) => tracker.flush()));
    failedFlushes += written.filter((ok) => !ok).length;
  }
  expect(failedFlushes).toBe(0);
  const rows = await sql<{ last_used_at: Date }[]>`select distinct last_used_at from api_keys where account_id = 'acct_lu'`;
  expect(rows.map((row) => row.last_used_at.getTime())).toEqual([latest]);
});

test("archiving namespaces while their keys' uses are flushed never deadlocks", async () => {
  // An archive destroys the namespace's keys in one statement; a flush of last_used_at
  // locks keys too. Both must take the rows in the same order.
  const account = "acct_lu_archive";
  await sql`insert into accounts (id, email) values (${account}, 'lu-archive@example.test')`;
  const namespaces = Array.from({ length: 12 }, (_, n) => `ns_lu_${String(n).padStart(2, "0")}`);
  const keys: string[] = [];
  for (const namespace of [...namespaces, "ns_lu_kept"]) {
    await sql`insert into namespaces (id, account_id, name) values (${namespace}, ${account}, ${namespace})`;
  }
  for (const [n, namespace] of namespaces.entries()) {
    // Key ids interleave across namespaces, and each namespace's rows are inserted in
    // reverse id order, so its physical order is not its id order.
    for (let k = 39; k >= 0; k--) {
      const id = `key_lu_a_${String(k).padStart(2, "0")}_${String(n).padStart(2, "0")}`;
      keys.push(id);
      await sql`insert into api_keys (id, account_id, namespace_id, display_name, key_prefix, token_hash, scopes) values (${id}, ${account}, ${namespace}, 'k', 'p', ${Buffer.alloc(32)}, ${["inference:invoke"]})`;
    }
  }
  const trackers = [new LastUsedTracker(sql), new LastUsedTracker(sql)];
  let failedFlushes = 0;
  let archiving = true;
  const flushing = (async () => {
    // Bounded, so a failing run (each deadlock waits deadlock_timeout) still ends.
    for (let round = 0; archiving && round < 200; round++) {
      trackers.forEach((tracker, n) => {
        for (const id of n === 0 ? keys : [...keys].reverse()) tracker.note(id, Date.UTC(2026, 0, 1) + round);
      });
      const written = await Promise.all(trackers.map((tracker) => tracker.flush()));
      failedFlushes += written.filter((ok) => !ok).length;
    }
  })();
  const outcomes = await Promise.allSettled(namespaces.map((namespace) => archiveNamespace(sql, namespace, account)));
  archiving = false;
  await flushing;
  expect(outcomes.map((outcome) => (outcome.status === "fulfilled" ? outcome.value.outcome : String(outcome.reason)))).toEqual(namespaces.map(() => "archived"));
  expect(failedFlushes).toBe(0);
  const [left] = await sql<{ n: number }[]>`select count(*)::int as n from api_keys where account_id = ${account}`;
  expect(left!.n).toBe(0);
}, 30_000);
