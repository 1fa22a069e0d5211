import type { Sql } from "../db/connect-database";
import { touchKeysLastUsed } from "../db/queries/api-keys";
import { touchOauthGrantsLastUsed } from "../db/queries/oauth-tokens";
import { log } from "../observability/log";

/** OAuth grant ids (oauth_tokens.id) start with this; every other credential id is an API key's. */
export const OAUTH_GRANT_ID_PREFIX = "og_";

/**
 * Keeps api_keys.last_used_at (and oauth_tokens.last_used_at of OAuth grants) without
 * a database write per request: uses are noted in memory and written as batched UPDATEs
 * every few seconds (and at shutdown). Precision is the flush interval, which is what a
 * "last used" column needs.
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
      const keys: [string[], Date[]] = [[], []];
      const grants: [string[], Date[]] = [[], []];
      for (const [id, at] of batch) {
        const target = id.startsWith(OAUTH_GRANT_ID_PREFIX) ? grants : keys;
        target[0].push(id);
        target[1].push(new Date(at));
      }
      // Both writes are idempotent (the later time wins), so a batch put back after one
      // of them failed may safely be written twice.
      if (keys[0].length > 0) await touchKeysLastUsed(this.sql, keys[0], keys[1]);
      if (grants[0].length > 0) await touchOauthGrantsLastUsed(this.sql, grants[0], grants[1]);
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
