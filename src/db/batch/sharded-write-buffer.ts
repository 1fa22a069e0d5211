import type { Sql } from "../connect-database";
import { WriteBuffer, type BatchTable, type WriteBufferOptions, type WriteBufferStats } from "./write-buffer";

/** Where rows go to be written: one WriteBuffer, or several side by side. */
export interface RowRouter {
  /**
   * Adds a table; returns its enqueue function. `shardKey` names the row's shard:
   * rows with the same key are written by the same buffer, in enqueue order.
   */
  register<Row>(table: BatchTable<Row>, shardKey: (row: Row) => string): (row: Row) => boolean;
}

/**
 * WriteBuffers side by side, each flushing in its own transaction, so each on its own
 * connection, with rows routed by a key (the metering sink's is the account). One
 * PostgreSQL backend spends ~25 µs of CPU on a metered request's rows, so a single
 * connection tops out near 40,000 request records per second; two connections take
 * the write path in parallel (`bun test/bench/write-path.ts`).
 *
 * Rows with the same key keep every guarantee of one WriteBuffer: enqueue order, and
 * rows enqueued in the same turn commit together. Rows with different keys may commit
 * in any order relative to each other. Keyed by account, no two concurrent flushes
 * update the same wallet or lease row, so they never wait on each other's row locks
 * (nor deadlock). Limits such as maxBufferedRows hold per shard.
 */
export class ShardedWriteBuffer implements RowRouter {
  private readonly shards: WriteBuffer[];

  constructor(sql: Sql, shardCount: number, options: WriteBufferOptions = {}) {
    if (!Number.isInteger(shardCount) || shardCount < 1) throw new Error(`a sharded write buffer needs at least one shard, got ${shardCount}`);
    this.shards = Array.from({ length: shardCount }, () => new WriteBuffer(sql, options));
  }

  get shardCount(): number {
    return this.shards.length;
  }

  register<Row>(table: BatchTable<Row>, shardKey: (row: Row) => string): (row: Row) => boolean {
    const enqueues = this.shards.map((shard) => shard.register(table));
    if (enqueues.length === 1) return enqueues[0]!;
    return (row) => enqueues[this.indexOf(shardKey(row))]!(row);
  }

  private indexOf(shardKey: string): number {
    return this.shards.length === 1 ? 0 : shardIndex(shardKey, this.shards.length);
  }

  /** Writes every row buffered when called, in every shard; rejects if any shard's write fails. */
  async flush(): Promise<void> {
    await Promise.all(this.shards.map((shard) => shard.flush()));
  }

  /** Resolves once every row enqueued before the call, in every shard, is committed. Never rejects. */
  async whenWritten(): Promise<void> {
    await Promise.all(this.shards.map((shard) => shard.whenWritten()));
  }

  /**
   * `callback` runs once every row enqueued before the call under `shardKey` (and all other
   * rows of its shard) is committed; see WriteBuffer.onWritten. One per metered request.
   */
  onWritten(shardKey: string, callback: () => void): void {
    this.shards[this.indexOf(shardKey)]!.onWritten(callback);
  }

  /** Stops every shard (see WriteBuffer.stop); they drain in parallel. */
  async stop(): Promise<void> {
    await Promise.all(this.shards.map((shard) => shard.stop()));
  }

  /** Every shard's counts, summed per table. */
  stats(): WriteBufferStats {
    const total: WriteBufferStats = { buffered: {}, written: {}, rejected: {}, deadLettered: {}, failures: 0 };
    for (const shard of this.shards) {
      const stats = shard.stats();
      total.failures += stats.failures;
      for (const key of ["buffered", "written", "rejected", "deadLettered"] as const) {
        for (const [table, count] of Object.entries(stats[key])) total[key][table] = (total[key][table] ?? 0) + count;
      }
    }
    return total;
  }
}

/** FNV-1a over the key's UTF-16 code units: cheap, and stable for the process's life. */
export function shardIndex(key: string, shardCount: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % shardCount;
}
