import { LRUCache } from "lru-cache";
import type { Sql } from "../db/connect-database";
import { findByokCredential, recordByokRefusal, recordByokUses } from "../db/queries/byok-keys";
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
  /** The namespace the key belongs to; null: a key of the whole account. */
  namespaceId: string | null;
}

interface CachedKey {
  /** Undefined: the account has no key for the provider (cached too, so misses stay cheap). */
  credential: ByokCredential | undefined;
}

/**
 * The decrypted BYOK key a caller's requests use for a provider, for the request path: the
 * key of the caller's namespace when it has one, else the account's (docs/api/byok.md "BYOK"); a
 * caller that is not bound to a namespace uses the account's alone. Decrypted keys live only
 * in this bounded, short-lived cache (CREDENTIAL_CACHE_TTL_MS), and leave it when they
 * expire (a timer per entry), not at the next read: an upload or delete invalidates it on
 * this instance at once and the others within the TTL. A key is never logged, and nothing
 * here puts it in an error.
 */
export class ByokKeyStore {
  private readonly cache: LRUCache<string, CachedKey>;
  /** Keys used since the last write of `last_used_at`, by cache key. */
  private pendingUses = new Map<string, { accountId: string; namespaceId: string | null; providerId: string; at: Date }>();
  private useFlush: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly keks: KekStore,
    ttlMs: number,
  ) {
    // ttlAutopurge: an expired entry (and the plaintext key in it) is dropped by a timer
    // when it expires, not kept until the next read of it.
    this.cache = new LRUCache<string, CachedKey>({ max: MAX_CACHED_KEYS, ttl: Math.max(1, ttlMs), ttlAutopurge: true });
  }

  /** Entries held now, expired ones included until they are dropped (for tests and diagnostics). */
  get cachedEntries(): number {
    return this.cache.size;
  }

  /** The key a caller bound to `namespaceId` (default: an account-wide caller) uses for the provider. */
  async keyFor(accountId: string, providerId: string, namespaceId: string | null = null): Promise<string | undefined> {
    return (await this.credentialFor(accountId, namespaceId, providerId))?.key;
  }

  /**
   * The key a caller bound to `namespaceId` (null: account-wide) uses for the provider: its
   * namespace's own first, else the account's. Never another namespace's.
   */
  async credentialFor(accountId: string, namespaceId: string | null, providerId: string): Promise<ByokCredential | undefined> {
    const id = cacheKey(accountId, providerId, namespaceId);
    const cached = this.cache.get(id);
    if (cached) return cached.credential;
    const row = await findByokCredential(this.sql, accountId, providerId, namespaceId);
    const credential = row
      ? {
          key: new TextDecoder().decode(await this.keks.open(row.kek_id, new Uint8Array(row.ciphertext))),
          apiBase: row.api_base ?? undefined,
          namespaceId: row.namespace_id,
        }
      : undefined;
    this.cache.set(id, { credential });
    return credential;
  }

  /**
   * The provider refused the key (`kind`: e.g. `unauthorized`): noted on its row for the
   * key listing. Fire and forget: the request that saw the refusal never waits for it, and
   * a failed write is only logged.
   */
  recordRefusal(accountId: string, keyNamespaceId: string | null, providerId: string, kind: string): void {
    recordByokRefusal(this.sql, accountId, providerId, keyNamespaceId, kind).then(
      () => undefined,
      (error: unknown) => log.warn("could not record a refused BYOK key", { providerId, error: error instanceof Error ? error.message : String(error) }),
    );
  }

  /**
   * The provider accepted the key: `last_used_at` is written with the next batch (every few
   * seconds, and at shutdown), never on the request's path.
   */
  recordUse(accountId: string, keyNamespaceId: string | null, providerId: string): void {
    this.pendingUses.set(cacheKey(accountId, providerId, keyNamespaceId), { accountId, namespaceId: keyNamespaceId, providerId, at: new Date() });
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
    try {
      await recordByokUses(this.sql, uses);
    } catch (error) {
      log.warn("could not record BYOK key use", { keys: uses.length, error: error instanceof Error ? error.message : String(error) });
    }
  }

  /**
   * After an upload or delete of any of the account's keys for the provider on this
   * instance: every caller's entry for it goes (an account-wide key serves every namespace
   * without one of its own).
   */
  invalidate(accountId: string, providerId: string): void {
    const prefix = `${accountId}\u0000${providerId}\u0000`;
    for (const id of [...this.cache.keys()]) if (id.startsWith(prefix)) this.cache.delete(id);
  }
}

const cacheKey = (accountId: string, providerId: string, namespaceId: string | null) => `${accountId}\u0000${providerId}\u0000${namespaceId ?? ""}`;
