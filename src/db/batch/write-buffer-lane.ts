import type { Sql } from "../connect-database";
import { escapedJson } from "../storable-text";

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
  /**
   * `write` streams its rows (COPY), so on a first attempt it takes every row of the
   * flush in one call, however many: one statement per table per flush, not one per
   * maxBatchRows. Retries and the isolation of refused rows still come in chunks.
   */
  readonly streamsWholeBatch?: boolean;
  /** Rows the buffer will never write: refused when full, or left at shutdown. Optional. */
  onDrop?(rows: readonly Row[], reason: DropReason): void;
  /**
   * Rows with the same key — across every table of the buffer — belong together (a
   * request's record, frames and ledger entry: its record id). When a batch the database
   * refused is split to find the bad rows, each key's rows stay in one transaction.
   * Without it every row stands alone.
   */
  groupKey?(row: Row): string;
  /**
   * Runs in the transaction that moves `rows` to the dead-letter table, instead of
   * `write`: for what must happen even though the rows are not written (the ledger gives
   * a dead-lettered charge's reservation back to its wallet). Optional.
   */
  onDeadLetter?(sql: Sql, rows: readonly Row[]): Promise<void>;
}

/**
 * The rows of one table: `pending` (enqueued, not yet taken) and `taken` (in the flush
 * now running). Non-generic on the outside so a WriteBuffer can hold lanes of different
 * row types without casts.
 */
export interface Lane {
  readonly name: string;
  readonly pending: number;
  /** Rows of the flush running now not yet settled (committed or dead-lettered). */
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

  // Isolating bad rows: the taken rows addressed by index, settled a few at a time.
  /** Rows taken by the flush running now, settled ones included (inFlight excludes them). */
  readonly takenCount: number;
  /** The group key of taken row `index` (see BatchTable.groupKey); undefined: it stands alone. */
  groupKeyOf(index: number): string | undefined;
  /** Writes the taken rows at `indices` (ascending), in chunks of `chunkRows`. */
  writeTakenAt(sql: Sql, indices: readonly number[], chunkRows: number, retry: boolean): Promise<void>;
  /** The rows at `indices` committed in a transaction of their own. */
  markWritten(indices: readonly number[]): void;
  /** Taken row `index` as JSON text for the dead-letter table (escapedJson). */
  describeTaken(index: number): string;
  /** Runs the table's onDeadLetter for the rows at `indices`, in `sql`'s transaction. */
  beforeDeadLetter(sql: Sql, indices: readonly number[]): Promise<void>;
  /** The rows at `indices` are in the dead-letter table: settled, never to be written. */
  markDeadLettered(indices: readonly number[]): void;
  readonly deadLettered: number;
}

/** Longest string of a dead-lettered row kept in its description. */
const DEAD_LETTER_MAX_STRING_CHARS = 16_384;

export class TableLane<Row> implements Lane {
  private rows: Row[] = [];
  private taken: Row[] = [];
  /** Taken rows settled one group at a time while isolating bad rows; undefined until then. */
  private settled: boolean[] | undefined;
  private settledCount = 0;
  private writtenCount = 0;
  private deadLetteredCount = 0;
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
    return this.taken.length - this.settledCount;
  }
  get takenCount(): number {
    return this.taken.length;
  }
  get written(): number {
    return this.writtenCount;
  }
  get deadLettered(): number {
    return this.deadLetteredCount;
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
    if (rows.length <= chunkRows || (this.table.streamsWholeBatch === true && !retry)) {
      if (rows.length > 0) await this.table.write(sql, rows, retry);
      return;
    }
    for (let start = 0; start < rows.length; start += chunkRows) {
      await this.table.write(sql, rows.slice(start, start + chunkRows), retry);
    }
  }

  commitTaken(): void {
    this.writtenCount += this.taken.length - this.settledCount;
    this.clearTaken();
  }

  restoreTaken(): void {
    const settled = this.settled;
    const unsettled = settled === undefined ? this.taken : this.taken.filter((_, index) => !settled[index]);
    this.clearTaken();
    if (unsettled.length === 0) return;
    this.rows = this.rows.length === 0 ? unsettled : unsettled.concat(this.rows);
  }

  private clearTaken(): void {
    this.taken = [];
    this.settled = undefined;
    this.settledCount = 0;
  }

  groupKeyOf(index: number): string | undefined {
    return this.table.groupKey?.(this.taken[index]!);
  }

  async writeTakenAt(sql: Sql, indices: readonly number[], chunkRows: number, retry: boolean): Promise<void> {
    for (let start = 0; start < indices.length; start += chunkRows) {
      await this.table.write(sql, indices.slice(start, start + chunkRows).map((index) => this.taken[index]!), retry);
    }
  }

  markWritten(indices: readonly number[]): void {
    this.writtenCount += this.settle(indices);
  }

  describeTaken(index: number): string {
    return escapedJson(this.taken[index], DEAD_LETTER_MAX_STRING_CHARS);
  }

  async beforeDeadLetter(sql: Sql, indices: readonly number[]): Promise<void> {
    await this.table.onDeadLetter?.(sql, indices.map((index) => this.taken[index]!));
  }

  markDeadLettered(indices: readonly number[]): void {
    this.deadLetteredCount += this.settle(indices);
  }

  /** Marks taken rows settled; returns how many were not already. */
  private settle(indices: readonly number[]): number {
    const settled = (this.settled ??= new Array<boolean>(this.taken.length).fill(false));
    let count = 0;
    for (const index of indices) {
      if (settled[index]) continue;
      settled[index] = true;
      count++;
    }
    this.settledCount += count;
    return count;
  }

  discard(reason: DropReason): number {
    this.restoreTaken();
    const rows = this.rows;
    this.rows = [];
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
