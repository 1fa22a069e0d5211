import type { Sql } from "../db/connect-database";
import { acquireLease, accountsWithExpiredLeases, giveExpiredLeasesBack, renewLeases, returnUnusedLease } from "../db/queries/wallet-leases";
import { lockWalletsThenLeases } from "../db/queries/wallet-locks";
import { newId } from "../ids";
import { ENDED } from "./admission-check";
import { log } from "../observability/log";

interface LocalLease {
  id: string;
  accountId: string;
  /**
   * What new requests may still reserve: the lease's amount as this instance knows it
   * (granted minus charges settled) less the reservations of requests in flight.
   */
  available: number;
  inFlight: number;
  lastUsed: number;
  /**
   * The wallet is low (its last grant was below the low-balance threshold, or it could not
   * cover a request): grants are exactly one request's reservation, and whatever a settled
   * request leaves unspent goes straight back to the wallet instead of staying here.
   */
  perRequest: boolean;
  /** Below this much available in the wallet, the balance is low (two chunks, at the last grant). */
  lowBalance: number;
  /** The grant being fetched, shared by every request waiting on this lease. */
  granting?: Promise<boolean>;
}

export interface WalletLeaseOptions {
  /** A lease not renewed for this long is swept back to its wallet. */
  ttlSeconds?: number;
  /** Renewal, idle return and sweep period. */
  tickMs?: number;
  /** An idle lease (no request in flight, none admitted for this long) is returned. */
  idleReturnMs?: number;
  /** A grant is at most max(minChunk, chunkMultiple × the request's reservation). */
  chunkMultiple?: number;
  minChunkMicroUsd?: number;
}

/**
 * Budgets that cannot be overspent, without a database write per request: each
 * instance leases a chunk of an account's available balance (acquireLease locks the
 * wallet row, so all instances' leases together never exceed the balance) and admits
 * requests against it in memory. A settled charge leaves the lease in the same
 * statement that debits the balance (applyLedgerEntries). Idle leases are returned;
 * leases of an instance that died stop being renewed and are swept after ttlSeconds.
 * Every change locks wallets before leases (lockWalletsThenLeases), as the ledger
 * flush does, so none of them can deadlock with another.
 *
 * A low balance (less than two chunks available) is shared request by request instead:
 * each admission reserves exactly its ceiling in the database and each settlement gives
 * the unspent rest back at once, so no instance's lease holds money a request on another
 * instance could use, and a refusal means the balance minus what requests in flight
 * reserved cannot cover the request.
 */
export class WalletLeases {
  private readonly leases = new Map<string, LocalLease>();
  /** Low-balance give-backs under way; maintenance and stop wait for them. */
  private readonly givingBack = new Set<Promise<void>>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly ttlSeconds: number;
  private readonly tickMs: number;
  private readonly idleReturnMs: number;
  private readonly chunkMultiple: number;
  private readonly minChunk: number;

  constructor(
    private readonly sql: Sql,
    options: WalletLeaseOptions = {},
  ) {
    this.ttlSeconds = options.ttlSeconds ?? 30;
    this.tickMs = options.tickMs ?? 5_000;
    this.idleReturnMs = options.idleReturnMs ?? 5_000;
    this.chunkMultiple = options.chunkMultiple ?? 64;
    this.minChunk = options.minChunkMicroUsd ?? 250_000;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref?.();
  }

  /**
   * Reserves `amount` for one request; returns the lease id, or undefined when the
   * wallet cannot cover it (402). Throws when the database is unreachable.
   */
  async admit(accountId: string, amount: number): Promise<string | undefined> {
    // The lease is looked up again after every wait: the one seen before it may have been
    // returned meanwhile (idle), and a reservation on it would no longer be backed.
    for (;;) {
      const lease = this.currentLease(accountId);
      if (lease.available >= amount) {
        lease.available -= amount;
        lease.inFlight++;
        lease.lastUsed = Date.now();
        return lease.id;
      }
      // One grant in flight per lease; others wait for it and look again, since a grant
      // may cover several of them (or be used up by requests that got there first).
      if (lease.granting) {
        await lease.granting;
        continue;
      }
      const needed = amount - Math.max(lease.available, 0);
      const chunk = Math.max(needed, this.minChunk, amount * this.chunkMultiple);
      // Below two chunks the wallet is low: a chunk would hold half of what is left.
      const lowBalance = 2 * chunk;
      lease.lowBalance = lowBalance;
      const grant = acquireLease(this.sql, { accountId, needed, chunk, leaseId: lease.id, ttlSeconds: this.ttlSeconds, lowBalance });
      lease.granting = grant.then((row) => {
        if (row) lease.available += row.amount;
        // A wallet that cannot cover one request is as low as it gets.
        lease.perRequest = row?.per_request ?? true;
        return row !== undefined;
      });
      let granted: boolean;
      try {
        granted = await lease.granting;
      } finally {
        lease.granting = undefined;
      }
      if (!granted && lease.available < amount) {
        // What is left here cannot serve this request; a smaller one elsewhere may fit it.
        await this.giveBack(lease);
        return undefined;
      }
    }
  }

  private currentLease(accountId: string): LocalLease {
    let lease = this.leases.get(accountId);
    if (!lease) {
      lease = { id: newId("wl", 20), accountId, available: 0, inFlight: 0, lastUsed: Date.now(), perRequest: false, lowBalance: 0 };
      this.leases.set(accountId, lease);
    }
    return lease;
  }

  /**
   * A request admitted with `reserved` finished and cost `charge` (null: unknown, nothing
   * debited). Resolves once what it leaves unspent of a low-balance lease is back in the
   * wallet, where every instance's next admission sees it (at once otherwise).
   */
  settle(accountId: string, leaseId: string, reserved: number, charge: number | null): Promise<void> {
    const lease = this.leases.get(accountId);
    const spent = charge ?? 0;
    if (!lease || lease.id !== leaseId) return ENDED; // already returned: its row carries the charge on its own
    lease.inFlight--;
    lease.available += reserved - spent;
    return lease.perRequest ? this.giveBack(lease) : ENDED;
  }

  /**
   * Returns what a low-balance lease holds beyond its requests in flight to the wallet now.
   * The amount leaves `available` before the round trip, so nothing admits against it
   * meanwhile; if the database fails, it comes back and the next settlement or the idle
   * return gives it back.
   */
  private giveBack(lease: LocalLease): Promise<void> {
    const unused = lease.available;
    if (unused <= 0) return ENDED;
    lease.available -= unused;
    const done = this.inTransaction(async (tx) => {
      await lockWalletsThenLeases(tx, [lease.accountId]);
      await returnUnusedLease(tx, lease.id, unused);
    })
      .catch((error: unknown) => {
        lease.available += unused;
        log.warn("could not give a low-balance reservation back; the lease keeps it", { error: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => this.givingBack.delete(done));
    this.givingBack.add(done);
    return done;
  }

  /** Renews held leases, returns idle ones, sweeps expired leases of dead instances. */
  async tick(now = Date.now()): Promise<void> {
    await Promise.all(this.givingBack);
    try {
      const ids = [...this.leases.values()].map((lease) => lease.id);
      if (ids.length > 0) {
        const renewed = await this.inTransaction(async (tx) => {
          await lockWalletsThenLeases(tx, [], ids);
          return renewLeases(tx, ids, this.ttlSeconds);
        });
        // A chunk leased while the balance was high goes back once it has become low, so
        // that other instances' requests can use it (at most one tick later).
        const free = new Map(renewed.map((row) => [row.id, Number(row.free)]));
        for (const lease of this.leases.values()) {
          const available = free.get(lease.id);
          if (!lease.perRequest && available !== undefined && available < lease.lowBalance) {
            lease.perRequest = true;
            this.giveBack(lease);
          }
        }
      }
      for (const lease of [...this.leases.values()]) {
        // Not while a grant is on its way: its amount would land on a lease nobody holds.
        if (lease.inFlight === 0 && lease.granting === undefined && now - lease.lastUsed >= this.idleReturnMs) await this.returnLease(lease);
      }
      await this.sweepExpiredLeases();
      await Promise.all(this.givingBack);
    } catch (error) {
      log.warn("wallet lease maintenance failed", { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Gives every unused lease back (SIGTERM, after the write buffer has flushed). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(this.givingBack);
    for (const lease of [...this.leases.values()]) {
      try {
        await this.returnLease(lease);
      } catch (error) {
        log.warn("could not return a wallet lease; it expires on its own", { error: error instanceof Error ? error.message : String(error) });
      }
    }
  }

  private async returnLease(lease: LocalLease): Promise<void> {
    this.leases.delete(lease.accountId);
    const unused = Math.max(lease.available, 0);
    if (unused === 0) return;
    await this.inTransaction(async (tx) => {
      await lockWalletsThenLeases(tx, [lease.accountId]);
      await returnUnusedLease(tx, lease.id, unused);
    });
  }

  /** Any instance's expired leases, wallets locked before leases like every other change. */
  private async sweepExpiredLeases(): Promise<void> {
    const accountIds = await accountsWithExpiredLeases(this.sql);
    if (accountIds.length === 0) return;
    await this.inTransaction(async (tx) => {
      await lockWalletsThenLeases(tx, accountIds);
      await giveExpiredLeasesBack(tx, accountIds);
    });
  }

  private async inTransaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return (await this.sql.begin((transaction) => work(transaction as unknown as Sql))) as T;
  }
}
