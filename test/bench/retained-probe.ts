/**
 * Preloaded into a server by `test/bench/retained.ts` (never by the server itself): on
 * SIGUSR2 it collects the main thread's heap fully and appends to RETAINED_PROBE_FILE one
 * JSON line of what is left (the heap's size, the memory reported from outside its blocks,
 * the cells by type). With RETAINED_SNAPSHOT_DIR set it also writes a V8-format heap snapshot
 * there (`<n>.heapsnapshot`, n counting from 0), which names what a count can only number.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { heapStats } from "bun:jsc";

const file = process.env.RETAINED_PROBE_FILE;
const snapshots = process.env.RETAINED_SNAPSHOT_DIR;
let taken = 0;

if (file !== undefined && Bun.isMainThread) {
  process.on("SIGUSR2", () => {
    // Twice: what the first collection's finalizers release goes in the second.
    Bun.gc(true);
    Bun.gc(true);
    const stats = heapStats();
    if (snapshots !== undefined) writeFileSync(join(snapshots, `${taken++}.heapsnapshot`), Bun.generateHeapSnapshot("v8") as unknown as string);
    appendFileSync(file, `${JSON.stringify({ heapSize: stats.heapSize, extraMemory: stats.extraMemorySize, cells: stats.objectTypeCounts })}\n`);
  });
}
