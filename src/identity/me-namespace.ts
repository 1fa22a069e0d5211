import { LRUCache } from "lru-cache";
import type { Sql } from "../db/connect-database";
import { oldestLiveNamespace } from "../db/queries/namespaces";
import type { Caller } from "../auth/principal";

/** How long the request path trusts a cached answer for an account (another instance's archive shows within it). */
const CACHE_TTL_MS = 60_000;

/**
 * The one answer to "which namespace is `me`": a namespace-bound credential's own
 * namespace; for an account-wide one (or a person signed in to the console), the
 * account's oldest live namespace, null when it has none. Management paths, the policy
 * routes' principals, the console's default page, metering and admission all ask here.
 *
 * The request path reads it `"cached"` (per account, for a minute), so metering adds no
 * query per request; management and the console read it `"fresh"`, which also refreshes
 * the cache. `forget` is the cache's one invalidation: whatever archives a namespace or
 * deletes an account calls it, so on that instance every caller agrees at once.
 */
export class MeNamespace {
  private readonly cache: LRUCache<string, string>;

  constructor(
    private readonly sql: Sql,
    ttlMs = CACHE_TTL_MS,
  ) {
    this.cache = new LRUCache<string, string>({ max: 10_000, ttl: ttlMs });
  }

  async namespaceFor(caller: Pick<Caller, "accountId" | "namespaceId">, read: "cached" | "fresh" = "cached"): Promise<string | null> {
    if (caller.namespaceId !== null) return caller.namespaceId;
    if (read === "cached") {
      const cached = this.cache.get(caller.accountId);
      if (cached !== undefined) return cached;
    }
    const found = await oldestLiveNamespace(this.sql, caller.accountId);
    if (found) this.cache.set(caller.accountId, found);
    else this.cache.delete(caller.accountId);
    return found ?? null;
  }

  /** The account's namespaces changed (one archived, the account deleted): the next answer is read afresh. */
  forget(accountId: string): void {
    this.cache.delete(accountId);
  }
}
