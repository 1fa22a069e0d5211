import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/db/connect-database";
import { WalletLeases } from "../../src/admission/wallet-leases";
import { createMeteringSink } from "../../src/metering/metering-sink";
import { ShardedWriteBuffer } from "../../src/db/batch/sharded-write-buffer";
import { createMigratedTestDatabase, type MigratedTestDatabase, BIGINT_AS_NUMBER } from "../support/test-database";

let database: MigratedTestDatabase;
let sql: Sql;
beforeAll(async () => {
  database = await createMigratedTestDatabase({ types: BIGINT_AS_NUMBER });
  sql = database.sql;
});
afterAll(() => database.close());

let accounts = 0;
async function account(balance: number): Promise<string> {
  const id = `acct_lease${++accounts}`;
  await sql`insert into accounts (id, email) values (${id}, ${id + "@example.test"})`;
  await sql`insert into wallets (account_id, balance_micro_usd) values (${id}, ${balance})`;
  return id;
}

async function wallet(id: string) {
  const [row] = await sql<{ balance_micro_usd: number; reserved_micro_usd: number }[]>`select balance_micro_usd, reserved_micro_usd from wallets where account_id = ${id}`;
  return { balance: Number(row!.balance_micro_usd), reserved: Number(row!.reserved_micro_usd) };
}

describe("WalletLeases", () => {
  test("admits from memory after the first grant: one database call for many requests", async () => {
    const id = await account(10_000_000);
    const leases = new WalletLeases(sql, { minChunkMicroUsd: 1_000 });
    const first = await leases.admit(id, 10);
    expect(first).toBeDefined();
    const reservedAfterFirst = (await wallet(id)).reserved;
    for (let i = 0; i < 50; i++) expect(await leases.admit(id, 10)).toBe(first!);
    // No further grant: the reservation in the database did not move.
    expect((await wallet(id)).reserved).toBe(reservedAfterFirst);
    await leases.stop();
  });

  test("two instances admitting concurrently against one small balance never reserve more than it", async () => {
    const id = await account(1_000);
    const a = new WalletLeases(sql);
    const b = new WalletLeases(sql);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).admit(id, 100)));
    const admitted = results.filter((r) => r !== undefined).length;
    // A low balance is reserved request by request: no lease strands a fragment.
    expect(admitted).toBe(10);
    const { reserved } = await wallet(id);
    expect(reserved).toBeLessThanOrEqual(1_000);
    await a.stop();
    await b.stop();
  });

  test("on a low balance, settling gives the unspent rest back to the wallet at once, for another instance to use", async () => {
    const id = await account(1_000);
    const a = new WalletLeases(sql);
    const b = new WalletLeases(sql);
    const leaseId = await a.admit(id, 600);
    expect(leaseId).toBeDefined();
    expect(await wallet(id)).toEqual({ balance: 1_000, reserved: 600 });
    expect(await b.admit(id, 900)).toBeUndefined();
    a.settle(id, leaseId!, 600, 100);
    await a.tick(); // waits for the give-back; the lease is not idle yet
    // The 100 charged stays in a's lease until its ledger entry debits it.
    expect(await wallet(id)).toEqual({ balance: 1_000, reserved: 100 });
    expect(await b.admit(id, 900)).toBeDefined();
    expect(await wallet(id)).toEqual({ balance: 1_000, reserved: 1_000 });
    await a.stop();
    await b.stop();
  });

  test("a refused request gives back what its lease still held, so a request elsewhere that fits it is admitted", async () => {
    const id = await account(10_000);
    // Chunks of 4 reservations while the wallet holds two of them: a leases 400 for a request of 100.
    const a = new WalletLeases(sql, { minChunkMicroUsd: 1, chunkMultiple: 4 });
    const b = new WalletLeases(sql);
    expect(await a.admit(id, 100)).toBeDefined();
    expect(await wallet(id)).toEqual({ balance: 10_000, reserved: 400 });
    expect(await b.admit(id, 9_500)).toBeDefined(); // 100 left in the wallet, 300 unused in a's lease
    expect(await a.admit(id, 500)).toBeUndefined();
    await a.tick();
    // 400 + 9,500 reserved, less the 300 a gave back: a's request of 100 is still in flight.
    expect(await wallet(id)).toEqual({ balance: 10_000, reserved: 9_600 });
    expect(await b.admit(id, 400)).toBeDefined();
    await a.stop();
    await b.stop();
  });

  test("a chunk leased while the balance was high goes back at the next renewal once the balance is low", async () => {
    const id = await account(10_000);
    const a = new WalletLeases(sql, { minChunkMicroUsd: 1, chunkMultiple: 4, idleReturnMs: 60_000 });
    const b = new WalletLeases(sql);
    expect(await a.admit(id, 100)).toBeDefined(); // a chunk of 400
    expect(await b.admit(id, 9_500)).toBeDefined(); // 100 left: low for a (below two chunks)
    expect(await b.admit(id, 400)).toBeUndefined();
    await a.tick(); // a's request is still in flight, so the lease is not idle
    expect(await wallet(id)).toEqual({ balance: 10_000, reserved: 9_600 });
    expect(await b.admit(id, 400)).toBeDefined();
    await a.stop();
    await b.stop();
  });

  test("settling gives the unspent reservation back to the lease and an idle lease back to the wallet", async () => {
    const id = await account(5_000);
    const leases = new WalletLeases(sql, { idleReturnMs: 0 });
    const leaseId = await leases.admit(id, 1_000);
    expect(leaseId).toBeDefined();
    leases.settle(id, leaseId!, 1_000, 400);
    // The charge's ledger entry is what moves the balance and takes 400 out of the lease.
    await sql`update wallets set balance_micro_usd = balance_micro_usd - 400, reserved_micro_usd = reserved_micro_usd - 400 where account_id = ${id}`;
    await sql`update wallet_leases set amount_micro_usd = amount_micro_usd - 400 where id = ${leaseId!}`;
    await leases.tick(Date.now() + 1_000);
    expect(await wallet(id)).toEqual({ balance: 4_600, reserved: 0 });
  });

  test("the lease of an instance that stopped renewing expires and is swept back by another instance", async () => {
    const id = await account(2_000);
    const dead = new WalletLeases(sql, { ttlSeconds: 1 });
    expect(await dead.admit(id, 1_500)).toBeDefined();
    expect((await wallet(id)).reserved).toBeGreaterThanOrEqual(1_500);
    const alive = new WalletLeases(sql);
    expect(await alive.admit(id, 1_500)).toBeUndefined(); // still held by the dead instance
    await Bun.sleep(1_100);
    await alive.tick();
    expect((await wallet(id)).reserved).toBe(0);
    expect(await alive.admit(id, 1_500)).toBeDefined();
    await alive.stop();
  });

  test("lease grants, settlements, returns and sweeps on one wallet at once never deadlock", async () => {
    // A grant locks the wallet, then the lease; a flush settles charges into both. Taken in
    // opposite orders, the two deadlock under load, and PostgreSQL kills one of them: an
    // admission error (a 503 to the client) or a failed flush. Small grants make every
    // admission a grant, and a flush runs every millisecond, so they overlap constantly.
    const id = await account(1_000_000_000);
    // An instance that died holding a lease on the same wallet: swept a second in.
    const dead = new WalletLeases(sql, { ttlSeconds: 1 });
    expect(await dead.admit(id, 100)).toBeDefined();
    // Its lease has expired (by the database's clock too) once this is past.
    const deadExpired = performance.now() + 1_100;
    // Idle leases are returned on every tick (a new lease id is granted next).
    const leases = new WalletLeases(sql, { chunkMultiple: 1, minChunkMicroUsd: 1, idleReturnMs: 0 });
    const buffer = new ShardedWriteBuffer(sql, 1, { flushIntervalMs: 1, retryBaseMs: 1 });
    const sink = createMeteringSink(buffer, { copy: true });
    const admissionErrors: unknown[] = [];
    let settled = 0;
    const until = performance.now() + 1_500;
    // Load runs for 1.5 s and until a tick that began after the dead lease expired has ended
    // (ticks slow down on a loaded machine; the sweep must still happen under load).
    let sweptAfterExpiry = false;
    const loading = () => performance.now() < until || !sweptAfterExpiry;
    const requester = async (lane: number) => {
      for (let i = 0; loading(); i++) {
        let leaseId: string | undefined;
        try {
          leaseId = await leases.admit(id, 100);
        } catch (error) {
          admissionErrors.push(error);
          continue;
        }
        expect(leaseId).toBeDefined();
        const record = `rq_deadlock_${lane}_${i}`;
        sink.ledger({ id: `le_${record}`, account_id: id, namespace_id: null, request_record_id: record, kind: "usage", amount_micro_usd: -60, released_micro_usd: 60, lease_id: leaseId! });
        leases.settle(id, leaseId!, 100, 60);
        settled++;
        if (i % 8 === 0) await Bun.sleep(0);
      }
    };
    // Lease maintenance (renewal, idle return, the sweep) runs alongside, as its timer would.
    const maintenance = async () => {
      while (loading()) {
        const afterExpiry = performance.now() > deadExpired;
        await leases.tick();
        if (afterExpiry) sweptAfterExpiry = true;
        await Bun.sleep(5);
      }
    };
    await Promise.all([...Array.from({ length: 8 }, (_, lane) => requester(lane)), maintenance()]);
    // The dead instance's lease was swept meanwhile.
    const [expired] = await sql<{ n: number }[]>`select count(*)::int as n from wallet_leases where account_id = ${id} and expires_at < now()`;
    expect(expired!.n).toBe(0);
    await buffer.flush();
    await leases.stop();
    await buffer.stop();
    expect(admissionErrors.map(String)).toEqual([]);
    expect(buffer.stats().failures).toBe(0);
    expect(settled).toBeGreaterThan(100);
    // Every charge reached the balance and every reservation was given back.
    expect(await wallet(id)).toEqual({ balance: 1_000_000_000 - 60 * settled, reserved: 0 });
  });
});
