import { LRUCache } from "lru-cache";
import type { Sql } from "../db/connect-database";
import { oldestLiveNamespace } from "../db/queries/namespaces";
import type { Principal } from "../auth/principal";

/**
 * The namespace a request's record belongs to: a namespace-baked credential's own,
 * else the account's oldest live namespace (what `me` means for an account-wide
 * key). Cached per account for a minute, so metering adds no query per request.
 */
export class NamespaceAttribution {
  private readonly cache = new LRUCache<string, string>({ max: 10_000, ttl: 60_000 });
  constructor(private readonly sql: Sql) {}

  async namespaceFor(principal: Principal): Promise<string | null> {
    if (principal.namespaceId !== null) return principal.namespaceId;
    const cached = this.cache.get(principal.accountId);
    if (cached !== undefined) return cached;
    const found = await oldestLiveNamespace(this.sql, principal.accountId);
    if (found) this.cache.set(principal.accountId, found);
    return found ?? null;
  }
}
