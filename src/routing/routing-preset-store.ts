import { LRUCache } from "lru-cache";
import type { Sql } from "../db/connect-database";
import { findRoutingPresetByName, type RoutingPresetRow } from "../db/queries/routing-presets";
import { presetParamsToIr, presetRouting, type RoutingPreset } from "./routing-preset";

interface Entry {
  /** null: the namespace has no preset of that name (cached too, so a typo costs one query per TTL). */
  preset: RoutingPreset | null;
  loadedAt: number;
}

/**
 * Routing presets by (namespace, name), cached for `ttlMs` (CREDENTIAL_CACHE_TTL_MS).
 * Only a request whose model starts with `@` asks; others never touch it. A change made
 * on this instance applies at once (the routes call `presetChanged` with the old and the
 * new name); a load that was in flight when something changed is not cached. Other
 * instances see a change when their entry expires.
 */
export class RoutingPresetStore {
  private readonly entries: LRUCache<string, Entry>;
  private readonly pending = new Map<string, Promise<RoutingPreset | null>>();
  private generation = 0;

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
    maxEntries = 20_000,
  ) {
    this.entries = new LRUCache<string, Entry>({ max: maxEntries });
  }

  /** The namespace's preset of that name (disabled ones included), or null. */
  async find(namespaceId: string, name: string): Promise<RoutingPreset | null> {
    const key = `${namespaceId}\u0000${name}`;
    const entry = this.entries.get(key);
    if (entry && Date.now() - entry.loadedAt <= this.ttlMs) return entry.preset;
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const load = this.load(key, namespaceId, name);
    this.pending.set(key, load);
    try {
      return await load;
    } finally {
      if (this.pending.get(key) === load) this.pending.delete(key);
    }
  }

  /** A preset of the namespace was created, replaced, renamed, disabled, enabled or deleted on this instance. */
  presetChanged(namespaceId: string, ...names: string[]): void {
    this.generation++;
    for (const name of names) {
      const key = `${namespaceId}\u0000${name}`;
      this.entries.delete(key);
      this.pending.delete(key);
    }
  }

  private async load(key: string, namespaceId: string, name: string): Promise<RoutingPreset | null> {
    const generation = this.generation;
    const loadedAt = Date.now();
    const row = await findRoutingPresetByName(this.sql, namespaceId, name);
    const preset = row ? toRoutingPreset(row) : null;
    if (generation === this.generation) this.entries.set(key, { preset, loadedAt });
    return preset;
  }
}

export function toRoutingPreset(row: RoutingPresetRow): RoutingPreset {
  return {
    id: row.id,
    name: row.name,
    model: row.model,
    systemPrompt: row.system_prompt,
    params: presetParamsToIr(row.params),
    ...presetRouting(row.routing),
    disabled: row.disabled_at !== null,
  };
}
