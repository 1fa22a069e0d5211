import type { Sql } from "../db/connect-database";
import { touchKeysLastUsed } from "../db/queries/api-keys";
import { touchOauthGrantsLastUsed } from "../db/queries/oauth-tokens";
import { PeriodicBatch } from "../db/batch/periodic-batch";

/** OAuth grant ids (oauth_tokens.id) start with this; every other credential id is an API key's. */
export const OAUTH_GRANT_ID_PREFIX = "og_";

/**
 * Keeps api_keys.last_used_at (and oauth_tokens.last_used_at of OAuth grants) without
 * a database write per request: uses are noted in memory and written as batched UPDATEs
 * every few seconds (and at shutdown). Precision is the flush interval, which is what a
 * "last used" column needs.
 */
export class LastUsedTracker {
  /** Credential id -> its latest use noted (ms). */
  private readonly uses: PeriodicBatch<number>;

  constructor(sql: Sql, intervalMs = 5_000) {
    this.uses = new PeriodicBatch({
      intervalMs,
      write: (batch) => writeUses(sql, batch),
      // Put back, a use loses to a newer one noted meanwhile.
      putBack: (failed, current) => current ?? failed,
      failure: "last_used_at flush failed",
    });
  }

  start(): void {
    this.uses.start();
  }

  note(keyId: string, at = Date.now()): void {
    this.uses.set(keyId, at);
  }

  /** Writes the uses noted so far; false when that failed and they wait for the next tick. */
  flush(): Promise<boolean> {
    return this.uses.flush();
  }

  stop(): Promise<void> {
    return this.uses.stop();
  }
}

async function writeUses(sql: Sql, batch: ReadonlyMap<string, number>): Promise<void> {
  const keys: [string[], Date[]] = [[], []];
  const grants: [string[], Date[]] = [[], []];
  for (const [id, at] of batch) {
    const target = id.startsWith(OAUTH_GRANT_ID_PREFIX) ? grants : keys;
    target[0].push(id);
    target[1].push(new Date(at));
  }
  // Both writes are idempotent (the later time wins), so a batch put back after one
  // of them failed may safely be written twice.
  if (keys[0].length > 0) await touchKeysLastUsed(sql, keys[0], keys[1]);
  if (grants[0].length > 0) await touchOauthGrantsLastUsed(sql, grants[0], grants[1]);
}
