import type { Sql } from "../db/connect-database";
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

interface StoredKey {
  account_id: string;
  provider_name: string;
  namespace_id: string | null;
  kek_id: string;
  ciphertext: Uint8Array;
}

/**
 * Re-seals every stored BYOK key that is under an older KEK to the current one, so the old
 * KEK is no longer needed. Each row is replaced only if it is still the box that was read:
 * a customer's upload in between wins (it is already under the current KEK).
 */
export async function resealKeys(sql: Sql, keks: KekStore): Promise<ResealResult> {
  const current = await keks.current();
  const stale = await sql<StoredKey[]>`
    select account_id, provider_name, namespace_id, kek_id, ciphertext from byok_keys where kek_id <> ${current.kek_id}`;
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
    const updated = await sql`
      update byok_keys set kek_id = ${current.kek_id}, ciphertext = ${box}
      where account_id = ${row.account_id} and provider_name = ${row.provider_name} and namespace_id is not distinct from ${row.namespace_id}::text
        and kek_id = ${row.kek_id} and ciphertext = ${Buffer.from(row.ciphertext)}`;
    if (updated.count === 1) resealed++;
  }
  const [left] = await sql<{ count: number }[]>`select count(*)::int as count from byok_keys where kek_id <> ${current.kek_id}`;
  return { kek_id: current.kek_id, resealed, unopenable, remaining_on_old_keks: left!.count };
}
