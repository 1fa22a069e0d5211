/**
 * A small in-process cache of computed values with a fixed lifetime. Concurrent misses
 * for one key share a single computation; a failed computation is not cached.
 * The clock is replaceable so tests can make entries expire without waiting.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { expiresAt: number; value: Promise<V> }>();
  private clock: () => number;

  constructor(
    readonly ttlMs: number,
    clock: () => number = Date.now,
  ) {
    this.clock = clock;
  }

  /** The cached value for `key` and when it expires (epoch ms), computing it on a miss. */
  async get(key: string, compute: () => Promise<V>): Promise<{ value: V; expiresAt: number }> {
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expiresAt > now) return { value: await hit.value, expiresAt: hit.expiresAt };
    this.dropExpired(now);
    const entry = { expiresAt: now + this.ttlMs, value: compute() };
    this.entries.set(key, entry);
    try {
      return { value: await entry.value, expiresAt: entry.expiresAt };
    } catch (error) {
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw error;
    }
  }

  /** The current time by this cache's clock. */
  now(): number {
    return this.clock();
  }

  /** Replaces the clock (tests). */
  setClock(clock: () => number): void {
    this.clock = clock;
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private dropExpired(now: number): void {
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}

/**
 * One cache per owner (a running app's Services), made on first use: the caches of two
 * apps in one process (tests) never share entries.
 */
export function ttlCachePerOwner<V>(ttlMs: number): (owner: object) => TtlCache<V> {
  const caches = new WeakMap<object, TtlCache<V>>();
  return (owner) => {
    let cache = caches.get(owner);
    if (cache === undefined) {
      cache = new TtlCache<V>(ttlMs);
      caches.set(owner, cache);
    }
    return cache;
  };
}
