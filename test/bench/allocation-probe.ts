/**
 * Preloaded into a server by `test/bench/allocations.ts` (never by the server itself). The
 * first SIGUSR2 collects the heap fully and counts its cells by type; the next counts them
 * again, without collecting, and appends to ALLOCATION_PROBE_FILE one JSON line of how many
 * cells of each type were made in between, and how many bytes the heap took for them:
 * "bytes: heap blocks" (the growth of the heap's block capacity; allocations.ts reads it over two
 * counts of different sizes, as the first bytes fill room left free) and "bytes: outside
 * the blocks" (memory reported to the heap by strings and buffers it does not hold in
 * blocks). The server runs with its collector held off (allocations.ts NO_COLLECTION_ENV):
 * every cell made is still there to count, garbage or not. Worker threads have heaps of
 * their own, not counted here.
 */
import { appendFileSync } from "node:fs";
import { heapStats } from "bun:jsc";

const file = process.env.ALLOCATION_PROBE_FILE;
let started: Record<string, number> | undefined;
/** Made young at the start: if it is gone at the end, the collector ran and the count is short. */
let sentinel: WeakRef<object> | undefined;

function counts(): Record<string, number> {
  const stats = heapStats();
  // JavaScriptCore's capacity counts the memory reported from outside its blocks too.
  return { ...stats.objectTypeCounts, "bytes: heap blocks": stats.heapCapacity - stats.extraMemorySize, "bytes: outside the blocks": stats.extraMemorySize };
}

if (file !== undefined && Bun.isMainThread) {
  process.on("SIGUSR2", () => {
    if (started === undefined) {
      Bun.gc(true);
      started = counts();
      sentinel = new WeakRef({});
      appendFileSync(file, "started\n");
      return;
    }
    const now = counts();
    const made: Record<string, number> = {};
    for (const [type, count] of Object.entries(now)) {
      const delta = count - (started[type] ?? 0);
      if (delta !== 0) made[type] = delta;
    }
    started = undefined;
    appendFileSync(file, sentinel?.deref() === undefined ? "collected\n" : `${JSON.stringify(made)}\n`);
  });
}
