import { LRUCache } from "lru-cache";
import type { Sql } from "../db/connect-database";
import type { KekStore } from "./kek-store";

/** Most decrypted keys held at once; each lives at most the TTL. */
const MAX_CACHED_KEYS = 10_000;

interface CachedKey {
  /** Undefined: the account has no key for the provider (cached too, so misses stay cheap). */
  key: string | undefined;
}

interface StoredKey {
  kek_id: string;
  ciphertext: Uint8Array;
}

/**
 * An account's decrypted BYOK key for a provider, for the request path. Decrypted keys live
 * only in this bounded, short-lived cache (CREDENTIAL_CACHE_TTL_MS): an upload or delete
 * invalidates it on this instance at once and the others within the TTL. A key is never
 * logged, and nothing here puts it in an error.
 */
export class ByokKeyStore {
  private readonly cache: LRUCache<string, CachedKey>;

  constructor(
    private readonly sql: Sql,
    private readonly keks: KekStore,
    ttlMs: number,
  ) {
    this.cache = new LRUCache<string, CachedKey>({ max: MAX_CACHED_KEYS, ttl: Math.max(1, ttlMs) });
  }

  async keyFor(accountId: string, providerId: string): Promise<string | undefined> {
    const id = cacheKey(accountId, providerId);
    const cached = this.cache.get(id);
    if (cached) return cached.key;
    const [row] = await this.sql<StoredKey[]>`
      select kek_id, ciphertext from byok_keys where account_id = ${accountId} and provider_name = ${providerId}`;
    const key = row ? new TextDecoder().decode(await this.keks.open(row.kek_id, new Uint8Array(row.ciphertext))) : undefined;
    this.cache.set(id, { key });
    return key;
  }

  /** After an upload or delete of that key on this instance. */
  invalidate(accountId: string, providerId: string): void {
    this.cache.delete(cacheKey(accountId, providerId));
  }
}

const cacheKey = (accountId: string, providerId: string) => `${accountId}\u0000${providerId}`;
