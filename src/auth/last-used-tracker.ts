import type { Sql } from "../db/connect-database";
import { touchKeysLastUsed } from "../db/queries/api-keys";
import { log } from "../observability/log";

/**
 * Keeps api_keys.last_used_at without a database write per request: uses are
 * noted in memory and written as one batched UPDATE every few seconds (and at
 * shutdown). Precision is the flush interval, which is what a "last used" column needs.
 */
export class LastUsedTracker {
  private pending = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly intervalMs = 5_000,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref?.();
  }

  note(keyId: string, at = Date.now()): void {
    this.pending.set(keyId, at);
  }

  /** Writes the uses noted so far; false when that failed and they wait for the next tick. */
  async flush(): Promise<boolean> {
    if (this.pending.size === 0) return true;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await touchKeysLastUsed(this.sql, [...batch.keys()], [...batch.values()].map((ms) => new Date(ms)));
      return true;
    } catch (error) {
      // Put the batch back (newer uses win) and try again on the next tick.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      log.warn("last_used_at flush failed", { error: String(error) });
      return false;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
