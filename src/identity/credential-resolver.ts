import { LRUCache } from "lru-cache";
import type { Sql } from "../db/connect-database";
import { findApiKeyForAuth } from "../db/queries/api-keys";
import { findOauthGrantForAuth } from "../db/queries/oauth-tokens";
import { FIRST_PARTY_CLIENT_ID } from "../auth/first-party-client";
import type { Principal } from "../auth/principal";
import { constantTimeEqual, OAUTH_ACCESS_TOKEN_PREFIX, parseApiKeyToken, sha256Base64 } from "../auth/tokens";
import type { LastUsedTracker } from "./last-used-tracker";

/** The credentials a derived key was minted through, nearest first. */
function ancestorsOf(principal: Principal): string[] {
  const ancestors = [...(principal.ancestorKeyIds ?? [])];
  if (principal.ancestorGrantId) ancestors.push(principal.ancestorGrantId);
  return ancestors;
}

interface CacheEntry {
  principal: Principal | null;
  checkedAt: number;
}

/**
 * Turns a presented token into a Principal. Results are cached in an LRU keyed by
 * the token's SHA-256 (never the token itself) for `ttlMs`: a key revoked on this
 * instance is dropped from the cache at once; other instances notice within the
 * TTL (CREDENTIAL_CACHE_TTL_MS, docs/configuration.md). Unknown tokens are cached too, so a flood of bad
 * tokens cannot turn into a flood of database reads.
 */
export class CredentialResolver {
  private readonly cache: LRUCache<string, CacheEntry>;
  private readonly cacheKeysById = new Map<string, string>();
  /** Credential id → the cached derived keys below it, dropped with it on invalidate. */
  private readonly descendantsById = new Map<string, Set<string>>();

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
    private readonly lastUsed: LastUsedTracker,
    maxEntries = 50_000,
  ) {
    this.cache = new LRUCache<string, CacheEntry>({
      max: maxEntries,
      dispose: (entry, cacheKey) => {
        if (entry.principal && this.cacheKeysById.get(entry.principal.id) === cacheKey) {
          this.cacheKeysById.delete(entry.principal.id);
        }
      },
    });
  }

  async resolve(token: string): Promise<Principal | null> {
    const cacheKey = sha256Base64(token);
    const now = Date.now();
    let entry = this.cache.get(cacheKey);
    if (!entry || now - entry.checkedAt > this.ttlMs) {
      entry = { principal: await this.lookup(token, Buffer.from(cacheKey, "base64")), checkedAt: now };
      this.cache.set(cacheKey, entry);
      if (entry.principal) {
        this.cacheKeysById.set(entry.principal.id, cacheKey);
        for (const ancestor of ancestorsOf(entry.principal)) {
          let below = this.descendantsById.get(ancestor);
          if (!below) this.descendantsById.set(ancestor, (below = new Set()));
          below.add(entry.principal.id);
        }
      }
    }
    const principal = entry.principal;
    if (!principal) return null;
    if (principal.expiresAt !== null && principal.expiresAt <= now) return null;
    this.lastUsed.note(principal.id, now);
    return principal;
  }

  /**
   * Forget a credential (an API key, an OAuth grant) at once on this instance: revocation,
   * refresh, namespace archive. The keys minted through it go with it, so a revoked
   * parent's children are looked up again (and refused) at their next request.
   */
  invalidate(credentialId: string): void {
    const cacheKey = this.cacheKeysById.get(credentialId);
    if (cacheKey !== undefined) this.cache.delete(cacheKey);
    this.cacheKeysById.delete(credentialId);
    const below = this.descendantsById.get(credentialId);
    this.descendantsById.delete(credentialId);
    // The ancestor lists are whole chains, so one level reaches every descendant.
    for (const descendant of below ?? []) {
      const descendantKey = this.cacheKeysById.get(descendant);
      if (descendantKey !== undefined) this.cache.delete(descendantKey);
      this.cacheKeysById.delete(descendant);
    }
  }

  private async lookup(token: string, tokenHash: Buffer): Promise<Principal | null> {
    if (token.startsWith(OAUTH_ACCESS_TOKEN_PREFIX)) return this.lookupOauthToken(tokenHash);
    const parsed = parseApiKeyToken(token);
    if (!parsed) return null;
    const row = await findApiKeyForAuth(this.sql, parsed.keyId);
    if (!row || !constantTimeEqual(Buffer.from(row.token_hash), tokenHash)) return null;
    if (row.revoked_at || row.ancestor_dead) return null;
    return {
      kind: "api_key",
      id: row.id,
      accountId: row.account_id,
      namespaceId: row.namespace_id,
      scopes: row.scopes,
      // A key minted through a registered client's token answers to that client's policies.
      oauthClientId: row.ancestor_client_id,
      expiresAt: row.expires_at ? row.expires_at.getTime() : null,
      ancestorKeyIds: row.ancestor_key_ids,
      ancestorGrantId: row.ancestor_grant_id,
    };
  }

  /**
   * An OAuth access token: its grant, found by the token's hash (the hash is the lookup
   * key, so no comparison is left to make). A grant stops working when revoked, when its
   * access token expires or is rotated out by a refresh, and when its namespace is
   * archived or its account deleted.
   */
  private async lookupOauthToken(tokenHash: Buffer): Promise<Principal | null> {
    const row = await findOauthGrantForAuth(this.sql, tokenHash);
    if (!row || row.revoked_at || row.namespace_archived || row.account_deleted) return null;
    return {
      kind: "oauth_token",
      id: row.id,
      accountId: row.account_id,
      namespaceId: row.namespace_id,
      scopes: row.scopes,
      oauthClientId: row.oauth_client_ref,
      // The built-in client has no row (no ref); a registered one's client_id is a
      // server-made `brc_…`, so no registration can take the CLI's id.
      firstPartySignIn: row.client_id === FIRST_PARTY_CLIENT_ID && row.oauth_client_ref === null,
      expiresAt: row.expires_at.getTime(),
    };
  }
}
