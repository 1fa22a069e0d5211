import type { Sql } from "../connect-database";
import { isDataRejection, sqlState } from "../errors";
import { insertDeadLetters, type DeadLetter } from "../queries/metering";
import { storableText } from "../storable-text";
import { log } from "../../observability/log";
import type { Lane } from "./write-buffer-lane";

/** One taken row of a flush: its lane and its index among the lane's taken rows. */
interface TakenRow {
  lane: Lane;
  index: number;
}

/** Rows that must commit together (one request's): see BatchTable.groupKey. */
type Group = TakenRow[];

export interface IsolationOptions {
  /** Rows per statement, as in a normal flush. */
  chunkRows: number;
  /** Called once per dead-lettered row, with its table's name. */
  onDeadLetter?(table: string): void;
}

/**
 * A flush failed because PostgreSQL refused some of its rows (isDataRejection): retrying
 * the batch would fail the same way forever, and hold back every later row of its buffer.
 * This settles the flush's taken rows without them: the batch is split in halves, each
 * written in a transaction of its own (with the idempotent retry statements), a half that
 * fails is split again, and so on down to single groups — a request's rows, which commit
 * together. Within a refused group each row is tried alone, so a request whose record is
 * bad still gets its ledger entry (its charge) written; the rows refused alone go to
 * `metering_dead_letters` with their error. One bad row among n groups costs about
 * 2·log2(n) small transactions.
 *
 * Resolves once every taken row is written or dead-lettered. Throws on any other error
 * (a lost connection while splitting): the rows settled so far stay settled, the rest go
 * back to the buffer, which retries them as after any failed flush.
 *
 * `refused` is the flush's error; `alreadyRetried` says the failed flush used the retry
 * statements (otherwise the whole batch is first tried once more with them, since COPY
 * can fail where they pass, e.g. on rows already committed).
 */
export async function isolateRefusedRows(sql: Sql, lanes: readonly Lane[], refused: unknown, alreadyRetried: boolean, options: IsolationOptions): Promise<void> {
  const isolation = new Isolation(sql, lanes, options);
  await isolation.settle(groupsOf(lanes), alreadyRetried ? refused : undefined);
}

/** The taken rows of every lane grouped by key, groups in order of their first row. */
function groupsOf(lanes: readonly Lane[]): Group[] {
  const byKey = new Map<string, Group>();
  const groups: Group[] = [];
  for (const lane of lanes) {
    for (let index = 0; index < lane.takenCount; index++) {
      const key = lane.groupKeyOf(index);
      const existing = key === undefined ? undefined : byKey.get(key);
      if (existing !== undefined) {
        existing.push({ lane, index });
        continue;
      }
      const group = [{ lane, index }];
      groups.push(group);
      if (key !== undefined) byKey.set(key, group);
    }
  }
  return groups;
}

class Isolation {
  constructor(
    private readonly sql: Sql,
    private readonly lanes: readonly Lane[],
    private readonly options: IsolationOptions,
  ) {}

  /** Writes `groups`, or (when they fail, or are known to: `refused`) splits them. */
  async settle(groups: readonly Group[], refused?: unknown): Promise<void> {
    const error = refused ?? (await this.write(groups.flat()));
    if (error === undefined) return;
    if (groups.length > 1) {
      const middle = groups.length >> 1;
      await this.settle(groups.slice(0, middle));
      await this.settle(groups.slice(middle));
      return;
    }
    await this.settleAlone(groups[0]!, error);
  }

  /** A refused group: each of its rows alone; those refused alone are dead-lettered. */
  private async settleAlone(group: Group, error: unknown): Promise<void> {
    const refused: Array<{ row: TakenRow; error: unknown }> = [];
    if (group.length === 1) refused.push({ row: group[0]!, error });
    else {
      for (const row of group) {
        const rowError = await this.write([row]);
        if (rowError !== undefined) refused.push({ row, error: rowError });
      }
    }
    if (refused.length > 0) await this.deadLetter(refused);
  }

  /**
   * Writes `rows` in one transaction, tables in the buffer's order, with the retry
   * statements (idempotent: some of these rows may have committed in an earlier attempt).
   * Returns the error when PostgreSQL refused the data; throws any other.
   */
  private async write(rows: readonly TakenRow[]): Promise<unknown> {
    const byLane = indicesByLane(rows);
    try {
      await this.sql.begin(async (transaction) => {
        const tx = transaction as unknown as Sql;
        for (const lane of this.lanes) {
          const indices = byLane.get(lane);
          if (indices !== undefined) await lane.writeTakenAt(tx, indices, this.options.chunkRows, true);
        }
      });
    } catch (error) {
      if (isDataRejection(error)) return error;
      throw error;
    }
    for (const [lane, indices] of byLane) lane.markWritten(indices);
    return undefined;
  }

  /** One transaction: the rows into metering_dead_letters, and their tables' onDeadLetter. */
  private async deadLetter(refused: ReadonlyArray<{ row: TakenRow; error: unknown }>): Promise<void> {
    const byLane = indicesByLane(refused.map(({ row }) => row));
    const letters: DeadLetter[] = refused.map(({ row, error }) => {
      const key = row.lane.groupKeyOf(row.index);
      return {
        table: row.lane.name,
        // The key is the row's own text (a record id): it may be what the database refused.
        recordId: key === undefined ? null : storableText(key),
        rowValues: row.lane.describeTaken(row.index),
        errorCode: sqlState(error) ?? null,
        errorMessage: storableText(error instanceof Error ? error.message : String(error)),
      };
    });
    const store = (withHooks: boolean) =>
      this.sql.begin(async (transaction) => {
        const tx = transaction as unknown as Sql;
        await insertDeadLetters(tx, letters);
        if (!withHooks) return;
        for (const lane of this.lanes) {
          const indices = byLane.get(lane);
          if (indices !== undefined) await lane.beforeDeadLetter(tx, indices);
        }
      });
    try {
      await store(true);
    } catch (error) {
      if (!isDataRejection(error)) throw error;
      // A table's onDeadLetter refused too: keep the rows anyway, or they would stall the buffer again.
      log.error("a dead-lettered row's follow-up was refused; the row is dead-lettered without it", { code: sqlState(error) });
      await store(false);
    }
    for (const [lane, indices] of byLane) {
      lane.markDeadLettered(indices);
      for (let i = 0; i < indices.length; i++) this.options.onDeadLetter?.(lane.name);
      // Never the values: counts, the table and the SQLSTATE only.
      log.warn("metering rows refused by the database were moved to metering_dead_letters; the rest of their batch is written", {
        table: lane.name,
        rows: indices.length,
        codes: [...new Set(refused.filter(({ row }) => row.lane === lane).map(({ error }) => sqlState(error)))],
      });
    }
  }
}

/** The rows' indices per lane, ascending (enqueue order). */
function indicesByLane(rows: readonly TakenRow[]): Map<Lane, number[]> {
  const byLane = new Map<Lane, number[]>();
  for (const { lane, index } of rows) {
    const indices = byLane.get(lane);
    if (indices === undefined) byLane.set(lane, [index]);
    else indices.push(index);
  }
  for (const indices of byLane.values()) indices.sort((a, b) => a - b);
  return byLane;
}
