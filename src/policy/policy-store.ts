import { LRUCache } from "lru-cache";
import type { Sql } from "../db/connect-database";
import { findBoundPolicies, type BoundPolicyRow } from "../db/queries/policies";
import { composePolicies, NO_POLICY } from "./compose-policies";
import { isPrincipalType, type BoundPolicy, type EffectivePolicy, type PrincipalRef } from "./effective-policy";
import { toPolicyRecord } from "./policy-record";

/** What one principal has bound, as loaded at `loadedAt` (epoch ms). Disabled policies included. */
interface PrincipalEntry {
  bound: readonly BoundPolicy[];
  loadedAt: number;
}

const EMPTY_ENTRY: PrincipalEntry = Object.freeze({ bound: [], loadedAt: 0 });

interface ComposedEntry {
  parts: readonly PrincipalEntry[];
  effective: EffectivePolicy;
}

/**
 * The effective policy of a set of principals, cached per principal.
 *
 * - Each principal's bindings (with their policies, disabled ones too) are one LRU
 *   entry, trusted for `ttlMs` (CREDENTIAL_CACHE_TTL_MS). A principal with nothing
 *   bound is cached like any other, so a request without policies costs one map lookup
 *   per principal and no query once warm.
 * - Cache misses of one call are filled with one query; concurrent misses of the same
 *   principal share it.
 * - A change made on this instance applies at once: the routes call `policyChanged`
 *   (every cached principal bound to that policy is dropped, found through a reverse
 *   index) or `principalChanged` (a binding added or removed). A load that was in
 *   flight when something changed is not cached. Other instances see the change when
 *   their entry expires, within `ttlMs`.
 * - The composition of a set of entries is memoised while those entries stay cached.
 */
export class PolicyStore {
  private readonly entries: LRUCache<string, PrincipalEntry>;
  private readonly composed: LRUCache<string, ComposedEntry>;
  /** Policy id → cache keys of the principals whose entry holds that policy. */
  private readonly principalsByPolicy = new Map<string, Set<string>>();
  private readonly pending = new Map<string, Promise<PrincipalEntry>>();
  /** Bumped by every invalidation: a load that started before one is not cached. */
  private generation = 0;

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
    maxEntries = 50_000,
  ) {
    this.entries = new LRUCache<string, PrincipalEntry>({
      max: maxEntries,
      dispose: (entry, cacheKey) => this.unindex(entry, cacheKey),
    });
    this.composed = new LRUCache<string, ComposedEntry>({ max: Math.max(1, Math.floor(maxEntries / 5)) });
  }

  /** The effective policy of a request (or of one principal) whose principals are `principals`, all of `accountId`. */
  async effectivePolicy(accountId: string, principals: readonly PrincipalRef[]): Promise<EffectivePolicy> {
    const now = Date.now();
    const keys: string[] = [];
    const parts: PrincipalEntry[] = [];
    let missing: { key: string; principal: PrincipalRef; index: number }[] | undefined;
    let anyBound = false;
    for (const principal of principals) {
      const key = cacheKey(accountId, principal);
      if (keys.includes(key)) continue;
      const entry = this.entries.get(key);
      if (entry && now - entry.loadedAt <= this.ttlMs) {
        if (entry.bound.length > 0) anyBound = true;
      } else (missing ??= []).push({ key, principal, index: keys.length });
      keys.push(key);
      parts.push(entry ?? EMPTY_ENTRY);
    }
    if (missing) {
      const loaded = await this.load(accountId, missing);
      for (const item of missing) {
        const entry = loaded.get(item.key)!;
        parts[item.index] = entry;
        if (entry.bound.length > 0) anyBound = true;
      }
    }
    if (!anyBound) return NO_POLICY;
    return this.compose(keys.join("\u0001"), parts);
  }

  /** A policy was updated, disabled, enabled or deleted on this instance. */
  policyChanged(policyId: string): void {
    this.beginInvalidation();
    for (const key of [...(this.principalsByPolicy.get(policyId) ?? [])]) this.entries.delete(key);
  }

  /** A binding naming this principal was added or removed on this instance. */
  principalChanged(accountId: string, principal: PrincipalRef): void {
    this.beginInvalidation();
    this.entries.delete(cacheKey(accountId, principal));
  }

  private beginInvalidation(): void {
    this.generation++;
    // A new lookup must not join a load that may predate the change.
    this.pending.clear();
  }

  private compose(memoKey: string, parts: readonly PrincipalEntry[]): EffectivePolicy {
    const memo = this.composed.get(memoKey);
    if (memo && memo.parts.length === parts.length && memo.parts.every((part, i) => part === parts[i])) return memo.effective;
    const effective = composePolicies(parts.flatMap((part) => part.bound));
    this.composed.set(memoKey, { parts, effective });
    return effective;
  }

  /** Loads the missing principals (sharing loads already in flight) and returns their entries by cache key. */
  private async load(accountId: string, missing: readonly { key: string; principal: PrincipalRef }[]): Promise<Map<string, PrincipalEntry>> {
    const result = new Map<string, PrincipalEntry>();
    const waits: Promise<void>[] = [];
    const toFetch: { key: string; principal: PrincipalRef }[] = [];
    for (const item of missing) {
      const inFlight = this.pending.get(item.key);
      if (inFlight) waits.push(inFlight.then((entry) => void result.set(item.key, entry)));
      else toFetch.push(item);
    }
    if (toFetch.length > 0) {
      const fetched = this.fetch(accountId, toFetch);
      toFetch.forEach((item, index) => {
        const entry = fetched.then((entries) => entries[index]!);
        this.pending.set(item.key, entry);
        waits.push(entry.then((value) => void result.set(item.key, value)));
      });
      // Clean up whether or not it succeeded; a failure reaches the caller through `waits`.
      fetched.then(
        () => toFetch.forEach((item) => this.pending.delete(item.key)),
        () => toFetch.forEach((item) => this.pending.delete(item.key)),
      );
    }
    await Promise.all(waits);
    return result;
  }

  private async fetch(accountId: string, items: readonly { key: string; principal: PrincipalRef }[]): Promise<PrincipalEntry[]> {
    const generation = this.generation;
    const loadedAt = Date.now();
    const rows = await findBoundPolicies(this.sql, accountId, items.map((item) => item.principal));
    const byKey = new Map<string, BoundPolicy[]>();
    for (const row of rows) {
      const principal = principalOf(row);
      if (!principal) continue;
      const key = cacheKey(accountId, principal);
      let list = byKey.get(key);
      if (!list) byKey.set(key, (list = []));
      list.push({ policy: toPolicyRecord(row), principal });
    }
    const entries = items.map((item) => ({ bound: byKey.get(item.key) ?? [], loadedAt }));
    if (generation === this.generation) {
      items.forEach((item, index) => {
        this.entries.set(item.key, entries[index]!);
        this.index(entries[index]!, item.key);
      });
    }
    return entries;
  }

  private index(entry: PrincipalEntry, key: string): void {
    for (const { policy } of entry.bound) {
      let keys = this.principalsByPolicy.get(policy.id);
      if (!keys) this.principalsByPolicy.set(policy.id, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(entry: PrincipalEntry, key: string): void {
    for (const { policy } of entry.bound) {
      const keys = this.principalsByPolicy.get(policy.id);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) this.principalsByPolicy.delete(policy.id);
    }
  }
}

function cacheKey(accountId: string, principal: PrincipalRef): string {
  return `${accountId}\u0000${principal.type}\u0000${principal.id}`;
}

function principalOf(row: BoundPolicyRow): PrincipalRef | undefined {
  return isPrincipalType(row.principal_type) ? { type: row.principal_type, id: row.principal_id } : undefined;
}
