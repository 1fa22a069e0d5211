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
  /** The namespace the key belongs to; null: a key of the whole account. */
  namespaceId: string | null;
}

interface CachedKey {
  /** Undefined: the account has no key for the provider (cached too, so misses stay cheap). */
  credential: ByokCredential | undefined;
}

interface StoredKey {
  kek_id: string;
  ciphertext: Uint8Array;
  api_base: string | null;
  namespace_id: string | null;
}

/**
 * The decrypted BYOK key a caller's requests use for a provider, for the request path: the
 * key of the caller's namespace when it has one, else the account's (README "BYOK"); a
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
    // `namespace_id = null` matches nothing: an account-wide caller finds the account's key alone.
    const [row] = await this.sql<StoredKey[]>`
      select kek_id, ciphertext, api_base, namespace_id from byok_keys
       where account_id = ${accountId} and provider_name = ${providerId}
         and (namespace_id is null or namespace_id = ${namespaceId})
       order by namespace_id nulls last limit 1`;
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
    this.sql`
      update byok_keys set last_failure_at = now(), last_failure_kind = ${kind}
      where account_id = ${accountId} and provider_name = ${providerId} and namespace_id is not distinct from ${keyNamespaceId}::text`.then(
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
    const accounts = uses.map((use) => use.accountId);
    const providers = uses.map((use) => use.providerId);
    // '' stands for an account-wide key (no namespace id is empty): arrays bind as text[].
    const scopes = uses.map((use) => use.namespaceId ?? "");
    // Times travel as ISO strings: postgres.js binds a string[] reliably for the ::timestamptz[] cast.
    const times = uses.map((use) => use.at.toISOString());
    try {
      await this.sql.begin(async (tx) => {
        // Rows locked in one order first: instances flushing overlapping batches cannot deadlock.
        await tx`
          select 1 from byok_keys
           where (account_id, provider_name, coalesce(namespace_id, '')) in (select * from unnest(${accounts}::text[], ${providers}::text[], ${scopes}::text[]))
           order by account_id, provider_name, namespace_id nulls first for update`;
        await tx`
          update byok_keys k set last_used_at = greatest(coalesce(k.last_used_at, u.at), u.at)
            from unnest(${accounts}::text[], ${providers}::text[], ${scopes}::text[], ${times}::timestamptz[]) as u(account_id, provider_name, scope, at)
           where k.account_id = u.account_id and k.provider_name = u.provider_name and coalesce(k.namespace_id, '') = u.scope`;
      });
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
