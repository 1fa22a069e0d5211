import type { Sql } from "../db/connect-database";

/** Why rows were handed to `BatchTable.onDrop` instead of the database. */
export type DropReason = "buffer_full" | "stopped";

/** One destination table of a WriteBuffer. */
export interface BatchTable<Row> {
  /** Metrics label and log field, e.g. "requests". Unique within one buffer. */
  readonly name: string;
  /**
   * Writes a whole chunk with ONE statement (`insert … select … from unnest($1::text[], …)`
   * or `jsonb_to_recordset($1::jsonb)`). `sql` is the flush's transaction. Must be
   * idempotent (`on conflict do nothing` on a key the gateway generated): a batch whose
   * commit was not acknowledged is written again.
   *
   * `retry` is true for every flush after a failed one, until one succeeds: the rows may
   * already be in the database (a commit whose acknowledgement was lost), so a write
   * that is not idempotent by itself (COPY) must use its idempotent form then.
   */
  write(sql: Sql, rows: Row[], retry: boolean): Promise<void>;
  /** Rows the buffer will never write: refused when full, or left at shutdown. Optional. */
  onDrop?(rows: readonly Row[], reason: DropReason): void;
}

/**
 * The rows of one table: `pending` (enqueued, not yet taken) and `taken` (in the flush
 * now running). Non-generic on the outside so a WriteBuffer can hold lanes of different
 * row types without casts.
 */
export interface Lane {
  readonly name: string;
  readonly pending: number;
  readonly inFlight: number;
  readonly written: number;
  rejected: number;
  /** Moves every pending row into the flush; returns how many. */
  take(): number;
  /** Writes the taken rows in chunks of `chunkRows`, one `write` call per chunk. */
  writeTaken(sql: Sql, chunkRows: number, retry: boolean): Promise<void>;
  /** The flush committed: the taken rows are written. */
  commitTaken(): void;
  /** The flush failed: the taken rows go back to the front, ahead of newer rows, in order. */
  restoreTaken(): void;
  /** Empties the lane (pending and taken) and hands the rows to onDrop; returns how many. */
  discard(reason: DropReason): number;
}

export class TableLane<Row> implements Lane {
  private rows: Row[] = [];
  private taken: Row[] = [];
  private writtenCount = 0;
  rejected = 0;
  /** Rejections not yet logged, and when the last log line was written (performance.now()). */
  rejectedSinceLog = 0;
  lastRejectLogAt = Number.NEGATIVE_INFINITY;

  constructor(readonly table: BatchTable<Row>) {}

  get name(): string {
    return this.table.name;
  }
  get pending(): number {
    return this.rows.length;
  }
  get inFlight(): number {
    return this.taken.length;
  }
  get written(): number {
    return this.writtenCount;
  }

  /** O(1); returns the pending count after the push. */
  push(row: Row): number {
    return this.rows.push(row);
  }

  take(): number {
    this.taken = this.rows;
    this.rows = [];
    return this.taken.length;
  }

  async writeTaken(sql: Sql, chunkRows: number, retry: boolean): Promise<void> {
    const rows = this.taken;
    if (rows.length <= chunkRows) {
      if (rows.length > 0) await this.table.write(sql, rows, retry);
      return;
    }
    for (let start = 0; start < rows.length; start += chunkRows) {
      await this.table.write(sql, rows.slice(start, start + chunkRows), retry);
    }
  }

  commitTaken(): void {
    this.writtenCount += this.taken.length;
    this.taken = [];
  }

  restoreTaken(): void {
    if (this.taken.length === 0) return;
    this.rows = this.rows.length === 0 ? this.taken : this.taken.concat(this.rows);
    this.taken = [];
  }

  discard(reason: DropReason): number {
    const rows = this.taken.length === 0 ? this.rows : this.taken.concat(this.rows);
    this.rows = [];
    this.taken = [];
    if (rows.length > 0) this.drop(rows, reason);
    return rows.length;
  }

  /** Hands rows to the table's onDrop; a throwing callback must not break the buffer. */
  drop(rows: readonly Row[], reason: DropReason): void {
    try {
      this.table.onDrop?.(rows, reason);
    } catch {
      // onDrop is best effort by contract; the loss is already counted and logged.
    }
  }
}
