/**
 * Preloaded into a Switchyard process by `test/bench/memory.ts --probe` (never by the
 * server itself): on SIGUSR2 it appends to MEMORY_PROBE_FILE the main thread's heap
 * figures in MB, then the same after a full collection (Bun.gc(true)), so what is live
 * and what is garbage waiting for the collector can be told apart. Worker threads have
 * heaps of their own, not seen here: their cost shows as RSS beyond these figures.
 */
import { appendFileSync } from "node:fs";
import { heapStats, memoryUsage } from "bun:jsc";

const file = process.env.MEMORY_PROBE_FILE;
const mb = (bytes: number) => Math.round(bytes / 1048576);

function line(label: string): string {
  const usage = process.memoryUsage();
  const heap = heapStats();
  // The native allocator's figures (mimalloc): what it hands out, and what it holds from the system.
  const native = memoryUsage();
  const figures = {
    rss: mb(usage.rss),
    heapSize: mb(heap.heapSize),
    heapCapacity: mb(heap.heapCapacity),
    extraMemory: mb(heap.extraMemorySize),
    arrayBuffers: mb(usage.arrayBuffers),
    objects: heap.objectCount,
    nativeInUse: mb(native.current),
    nativeCommitted: mb(native.currentCommit),
  };
  return `  ${label}: ${JSON.stringify(figures)}\n`;
}

if (file !== undefined && Bun.isMainThread) {
  process.on("SIGUSR2", () => {
    const before = line("before gc");
    Bun.gc(true);
    appendFileSync(file, before + line("after gc"));
  });
}
