import type { Sql } from "../../db/connect-database";
import { badRequest, notFound } from "../../errors/api-error";
import type { Catalog } from "../../providers/catalog";
import type { KekStore } from "../../byok/kek-store";
import type { ByokKeyStore } from "../../byok/byok-key-store";
import { SealedBoxError } from "../../byok/sealed-box";
import { isoOrNull } from "../serialize";
import type { EgressGuard } from "../../egress/egress-guard";

export interface ByokKeyDeps {
  sql: Sql;
  catalog: Catalog;
  keks: KekStore;
  byokKeys: ByokKeyStore;
  egress: Pick<EgressGuard, "refusal">;
}

export interface ByokKeyUpload {
  provider_name: string;
  ciphertext_b64: string;
  kek_id: string;
  key_prefix: string;
  api_base?: string | null;
}

interface ByokKeyRow {
  provider_name: string;
  kek_id: string;
  key_prefix: string;
  api_base: string | null;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
  last_failure_at: Date | null;
  last_failure_kind: string | null;
}

/** What the list shows of a stored key: never its ciphertext, never the key. */
export function byokKeyEnvelope(row: ByokKeyRow) {
  return {
    provider_name: row.provider_name,
    kek_id: row.kek_id,
    key_prefix: row.key_prefix,
    api_base: row.api_base,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    last_used_at: isoOrNull(row.last_used_at),
    last_failure_at: isoOrNull(row.last_failure_at),
    last_failure_kind: row.last_failure_kind,
  };
}

export async function listByokKeys(deps: ByokKeyDeps, accountId: string) {
  const rows = await deps.sql<ByokKeyRow[]>`
    select provider_name, kek_id, key_prefix, api_base, created_at, updated_at, last_used_at, last_failure_at, last_failure_kind
    from byok_keys where account_id = ${accountId} order by provider_name`;
  return rows.map(byokKeyEnvelope);
}

/** Standard base64 with padding, as libsodium's ORIGINAL variant and Python's b64encode write it. */
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The egress rule for customer-supplied upstream addresses (README "Reliability"). */
function checkApiBase(egress: ByokKeyDeps["egress"], value: string): void {
  const refusal = egress.refusal(value);
  if (refusal !== undefined) throw badRequest(`api_base ${refusal}`);
}

/**
 * Stores the account's key for a provider, replacing any previous one. The box is kept as
 * uploaded (sealed to the current KEK); it is opened here only to refuse one that does not
 * open, and the plaintext is dropped at once.
 */
export async function upsertByokKey(deps: ByokKeyDeps, accountId: string, input: ByokKeyUpload) {
  const provider = deps.catalog.getProvider(input.provider_name);
  if (!provider) throw badRequest(`provider_name: unknown provider "${input.provider_name}"`);
  if (!provider.byok) throw badRequest(`provider_name: provider "${input.provider_name}" does not accept BYOK keys`);
  const current = await deps.keks.current();
  if (input.kek_id !== current.kek_id) {
    throw badRequest(`kek_id is not the current key-encryption key (${current.kek_id}): fetch GET /v1/byok/encryption-pubkey and seal again`);
  }
  if (!STANDARD_BASE64.test(input.ciphertext_b64)) throw badRequest("ciphertext_b64 must be standard base64 with padding");
  if (input.api_base !== undefined && input.api_base !== null) checkApiBase(deps.egress, input.api_base);
  const box = Buffer.from(input.ciphertext_b64, "base64");
  let plaintext: Uint8Array;
  try {
    plaintext = await deps.keks.open(current.kek_id, new Uint8Array(box));
  } catch (error) {
    if (error instanceof SealedBoxError) throw badRequest("ciphertext_b64 does not open: seal the key with crypto_box_seal to the current public key");
    throw error;
  }
  const keyLength = plaintext.length;
  plaintext.fill(0);
  if (keyLength === 0) throw badRequest("ciphertext_b64 seals an empty key");
  // The prefix is shown in listings: it must stay a hint, never most of the key.
  const stem = input.key_prefix.replace(/(\.|…)+$/, "");
  if (stem.length * 2 > keyLength) throw badRequest("key_prefix must be a short prefix of the key, not the key");
  await deps.sql`
    insert into byok_keys (account_id, provider_name, kek_id, ciphertext, key_prefix, api_base)
    values (${accountId}, ${input.provider_name}, ${current.kek_id}, ${box}, ${input.key_prefix}, ${input.api_base ?? null})
    on conflict (account_id, provider_name) do update set
      kek_id = excluded.kek_id, ciphertext = excluded.ciphertext, key_prefix = excluded.key_prefix,
      api_base = excluded.api_base, updated_at = now(), last_failure_at = null, last_failure_kind = null`;
  deps.byokKeys.invalidate(accountId, input.provider_name);
  return { provider_name: input.provider_name, kek_id: current.kek_id, key_prefix: input.key_prefix };
}

/** Provider ids are short slugs; anything else cannot have a key (the same 404 as a missing one). */
const PROVIDER_ID = /^[A-Za-z0-9._-]{1,128}$/;

export async function deleteByokKey(deps: ByokKeyDeps, accountId: string, providerName: string) {
  if (!PROVIDER_ID.test(providerName)) throw notFound("BYOK key");
  const deleted = await deps.sql`delete from byok_keys where account_id = ${accountId} and provider_name = ${providerName}`;
  deps.byokKeys.invalidate(accountId, providerName);
  if (deleted.count === 0) throw notFound("BYOK key");
  return { deleted: true as const };
}
