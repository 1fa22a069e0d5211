import type { Sql } from "../connect-database";
import { runQuery, runQueryRow } from "./run-query";

/** A key-encryption key as stored; the private half is wrapped by the master key. */
export interface KekRow {
  kek_id: string;
  public_key: Uint8Array;
  wrapped_private_key: Uint8Array;
  created_at: Date;
}

export type CurrentKekRow = Pick<KekRow, "kek_id" | "public_key" | "created_at">;

/** A new key-encryption key, its private half already wrapped. */
export interface NewKek {
  kekId: string;
  publicKey: Uint8Array;
  wrappedKey: Uint8Array;
}

export async function currentKek(sql: Sql): Promise<CurrentKekRow | undefined> {
  return runQueryRow<CurrentKekRow>(sql, "currentKek", []);
}

/** Inserts `kek` as the current one unless another is current already (that one wins). */
export async function insertFirstCurrentKek(sql: Sql, kek: NewKek): Promise<void> {
  await runQuery(sql, "insertFirstCurrentKek", [kek.kekId, kek.publicKey, kek.wrappedKey]);
}

/** Takes the rotation lock until the end of `tx`'s transaction. */
export async function lockKekRotation(tx: Sql, lockKey: bigint): Promise<void> {
  await runQuery(tx, "lockKekRotation", [lockKey.toString()]);
}

/** In the rotation's transaction: the current KEK retires and `kek` becomes current. */
export async function replaceCurrentKek(tx: Sql, kek: NewKek): Promise<void> {
  await runQuery(tx, "retireCurrentKek", []);
  await runQuery(tx, "insertCurrentKek", [kek.kekId, kek.publicKey, kek.wrappedKey]);
}

export async function findKek(sql: Sql, kekId: string): Promise<KekRow | undefined> {
  return runQueryRow<KekRow>(sql, "findKek", [kekId]);
}
