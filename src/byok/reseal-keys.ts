import type { Sql } from "../db/connect-database";
import { countByokKeysNotUnder, listByokKeysNotUnder, resealByokKey } from "../db/queries/byok-keys";
import type { KekStore } from "./kek-store";
import { SealedBoxError } from "./sealed-box";

export interface ResealResult {
  /** The current KEK every re-sealed key is now under. */
  kek_id: string;
  resealed: number;
  /** Stored boxes that no longer open (left as they are, so nothing is lost). */
  unopenable: number;
  /** Keys still under an older KEK afterwards (0 unless some were unopenable): the old KEKs are unused. */
  remaining_on_old_keks: number;
}

/**
 * Re-seals every stored BYOK key that is under an older KEK to the current one, so the old
 * KEK is no longer needed. Each row is replaced only if it is still the box that was read:
 * a customer's upload in between wins (it is already under the current KEK).
 */
export async function resealKeys(sql: Sql, keks: KekStore): Promise<ResealResult> {
  const current = await keks.current();
  const stale = await listByokKeysNotUnder(sql, current.kek_id);
  let resealed = 0;
  let unopenable = 0;
  for (const row of stale) {
    let plaintext: Uint8Array;
    try {
      plaintext = await keks.open(row.kek_id, new Uint8Array(row.ciphertext));
    } catch (error) {
      if (!(error instanceof SealedBoxError)) throw error;
      unopenable++;
      continue;
    }
    const box = Buffer.from(await keks.seal(current.kek_id, plaintext));
    plaintext.fill(0);
    if (await resealByokKey(sql, row, current.kek_id, box)) resealed++;
  }
  const left = await countByokKeysNotUnder(sql, current.kek_id);
  return { kek_id: current.kek_id, resealed, unopenable, remaining_on_old_keks: left };
}
