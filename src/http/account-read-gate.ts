import { ApiError } from "../errors/api-error";

/** The first words of the 429 a busy account gets; the console tells it apart from the sign-in throttle's. */
export const TOO_MANY_READS = "too many reads of this account in flight";

/**
 * One server process's share of ACCOUNT_CONCURRENT_READS when SERVER_PROCESSES processes
 * share the instance: the limit divided among them (at least 1 each), so that an account's
 * reads on the whole instance stay within the limit as long as there are no more processes
 * than reads allowed (with more, each still allows one). What it costs: the kernel spreads
 * connections over the processes, so an account may be refused a read on a busy process
 * while another has a slot free; a client reading fewer than `limit` at once over one
 * connection is never refused.
 */
export function readsPerProcess(limit: number, processes: number): number {
  return Math.max(1, Math.floor(limit / Math.max(1, processes)));
}

/**
 * How many expensive management reads (history, usage, daily usage, the console's overview
 * and CSV export) each account has in flight, refused past `limit` with a 429.
 *
 * In memory, per process, on purpose: what it protects is this process's read pool (one
 * account's loops must not hold every connection of it while other accounts wait), and it
 * costs no database round trip per read, which a count shared between instances would (two:
 * one to take a slot, one to give it back, on the primary pool, for every read an attacker
 * sends, refused ones included), besides a lease that a crashed process's slots expire by
 * and a renewal for long exports. So the bound holds per instance: with SERVER_PROCESSES
 * each process gets its share (readsPerProcess), and with several instances an account may
 * have the limit in flight on each, each against its own read pools. Unlike budgets and
 * rate limits this is not a promise to the customer.
 */
export class AccountReadGate {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly limit: number) {}

  /**
   * Takes one of the account's slots, or throws the 429 when all are taken. The returned
   * release gives it back; calling it more than once gives back one slot only.
   */
  enter(accountId: string): () => void {
    const current = this.inFlight.get(accountId) ?? 0;
    if (current >= this.limit) {
      throw new ApiError(
        "rate_limited",
        `${TOO_MANY_READS} (at most ${this.limit} history, usage or export reads at once); retry when one has finished`,
        // The reads it waits for take at most the read statement timeout, usually far less.
        { retryAfter: 1 },
      );
    }
    this.inFlight.set(accountId, current + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(accountId) ?? 1) - 1;
      // No entry stays for an idle account: the map holds only accounts reading now.
      if (left <= 0) this.inFlight.delete(accountId);
      else this.inFlight.set(accountId, left);
    };
  }

  /** Runs `read` in one of the account's slots (or throws the 429 without running it). */
  async run<T>(accountId: string, read: () => Promise<T>): Promise<T> {
    const release = this.enter(accountId);
    try {
      return await read();
    } finally {
      release();
    }
  }
}
