import { LRUCache } from "lru-cache";
import type { Sql } from "../db/connect-database";
import type { KekStore } from "./kek-store";
import { log } from "../observability/log";

/** Most decrypted keys held at once; each lives at most the TTL. */
const MAX_CACHED_KEYS = 10_000;
/** Uses are written at most this often, in one statement: a "last used" column needs no more precision. */
const USE_FLUSH_INTERVAL_MS = 5_000;

/** A decrypted key and where to use it. */
export interface ByokCredential {
  key: string;
  /** The key's own base URL (e.g. a regional or proxy endpoint); undefined: the provider's. */
  apiBase: string | undefined;
}

interface CachedKey {
  /** Undefined: the account has no key for the provider (cached too, so misses stay cheap). */
  credential: ByokCredential | undefined;
}

interface StoredKey {
  kek_id: string;
  ciphertext: Uint8Array;
  api_base: string | null;
}

/**
 * An account's decrypted BYOK key for a provider, for the request path. Decrypted keys live
 * only in this bounded, short-lived cache (CREDENTIAL_CACHE_TTL_MS): an upload or delete
 * invalidates it on this instance at once and the others within the TTL. A key is never
 * logged, and nothing here puts it in an error.
 */
export class ByokKeyStore {
  private readonly cache: LRUCache<string, CachedKey>;
  /** Keys used since the last write of `last_used_at`, by cache key. */
  private pendingUses = new Map<string, { accountId: string; providerId: string; at: Date }>();
  private useFlush: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly keks: KekStore,
    ttlMs: number,
  ) {
    this.cache = new LRUCache<string, CachedKey>({ max: MAX_CACHED_KEYS, ttl: Math.max(1, ttlMs) });
  }

  async keyFor(accountId: string, providerId: string): Promise<string | undefined> {
    return (await this.credentialFor(accountId, providerId))?.key;
  }

  async credentialFor(accountId: string, providerId: string): Promise<ByokCredential | undefined> {
    const id = cacheKey(accountId, providerId);
    const cached = this.cache.get(id);
    if (cached) return cached.credential;
    const [row] = await this.sql<StoredKey[]>`
      select kek_id, ciphertext, api_base from byok_keys where account_id = ${accountId} and provider_name = ${providerId}`;
    const credential = row
      ? { key: new TextDecoder().decode(await this.keks.open(row.kek_id, new Uint8Array(row.ciphertext))), apiBase: row.api_base ?? undefined }
      : undefined;
    this.cache.set(id, { credential });
    return credential;
  }

  /**
   * The provider refused the key (`kind`: e.g. `unauthorized`): noted on its row for the
   * key listing. Fire and forget: the request that saw the refusal never waits for it, and
   * a failed write is only logged.
   */
  recordRefusal(accountId: string, providerId: string, kind: string): void {
    this.sql`
      update byok_keys set last_failure_at = now(), last_failure_kind = ${kind}
      where account_id = ${accountId} and provider_name = ${providerId}`.then(
      () => undefined,
      (error: unknown) => log.warn("could not record a refused BYOK key", { providerId, error: error instanceof Error ? error.message : String(error) }),
    );
  }

  /**
   * The provider accepted the key: `last_used_at` is written with the next batch (every few
   * seconds, and at shutdown), never on the request's path.
   */
  recordUse(accountId: string, providerId: string): void {
    this.pendingUses.set(cacheKey(accountId, providerId), { accountId, providerId, at: new Date() });
    if (this.useFlush === undefined) {
      this.useFlush = setTimeout(() => void this.flushUses(), USE_FLUSH_INTERVAL_MS);
      this.useFlush.unref?.();
    }
  }

  /** Writes the uses noted so far (a failed write is logged; those uses are not retried). */
  async flushUses(): Promise<void> {
    if (this.useFlush !== undefined) clearTimeout(this.useFlush);
    this.useFlush = undefined;
    if (this.pendingUses.size === 0) return;
    const uses = [...this.pendingUses.values()];
    this.pendingUses = new Map();
    const accounts = uses.map((use) => use.accountId);
    const providers = uses.map((use) => use.providerId);
    // Times travel as ISO strings: postgres.js binds a string[] reliably for the ::timestamptz[] cast.
    const times = uses.map((use) => use.at.toISOString());
    try {
      await this.sql.begin(async (tx) => {
        // Rows locked in one order first: instances flushing overlapping batches cannot deadlock.
        await tx`
          select 1 from byok_keys
           where (account_id, provider_name) in (select * from unnest(${accounts}::text[], ${providers}::text[]))
           order by account_id, provider_name for update`;
        await tx`
          update byok_keys k set last_used_at = greatest(coalesce(k.last_used_at, u.at), u.at)
            from unnest(${accounts}::text[], ${providers}::text[], ${times}::timestamptz[]) as u(account_id, provider_name, at)
           where k.account_id = u.account_id and k.provider_name = u.provider_name`;
      });
    } catch (error) {
      log.warn("could not record BYOK key use", { keys: uses.length, error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** After an upload or delete of that key on this instance. */
  invalidate(accountId: string, providerId: string): void {
    this.cache.delete(cacheKey(accountId, providerId));
  }
}

const cacheKey = (accountId: string, providerId: string) => `${accountId}\u0000${providerId}`;
