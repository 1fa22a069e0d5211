import type { Caller } from "../../auth/principal";
import { deleteByokKey as deleteStoredByokKey, listByokKeys as listStoredByokKeys, upsertByokKey as upsertStoredByokKey, type ByokKeyRow } from "../../db/queries/byok-keys";
import { badRequest, notFound } from "../../errors/api-error";
import { SealedBoxError } from "../../byok/sealed-box";
import { isoOrNull } from "../serialize";
import type { Services } from "../../services";

/** What the BYOK key service uses: the database, the catalog, the KEKs, the request path's key cache and the egress rule. */
export type ByokKeyServiceDeps = Pick<Services, "db" | "catalog" | "keks" | "byokKeys" | "egress">;

export interface ByokKeyUpload {
  provider_name: string;
  ciphertext_b64: string;
  kek_id: string;
  key_prefix: string;
  api_base?: string | null;
}

/**
 * Who writes or reads BYOK keys: an account-wide credential or the console (namespaceId
 * null) manages the account's keys; a credential bound to a namespace writes and deletes
 * only that namespace's, and reads its namespace's and the account's.
 */
export type ByokCaller = Pick<Caller, "accountId" | "namespaceId">;

/** What the list shows of a stored key: never its ciphertext, never the key. */
export function byokKeyEnvelope(row: ByokKeyRow) {
  return {
    provider_name: row.provider_name,
    namespace_id: row.namespace_id,
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

/**
 * The keys the caller sees: an account-wide caller every key of the account (each with its
 * `namespace_id`), a namespace-bound one its namespace's and the account's (null), never
 * another namespace's.
 */
export async function listByokKeys(deps: ByokKeyServiceDeps, caller: ByokCaller) {
  const rows = await listStoredByokKeys(deps.db.sql, caller.accountId, caller.namespaceId);
  return rows.map(byokKeyEnvelope);
}

/** Listings show `key_prefix` to tell keys apart: a few leading characters, never more. */
const MAX_KEY_PREFIX_CHARS = 8;

/** True when `bytes` is how the key begins (compared as bytes: the key is never made a string here). */
function isPrefixOf(bytes: Uint8Array, key: Uint8Array): boolean {
  if (bytes.length > key.length) return false;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== key[i]) return false;
  return true;
}

/** Standard base64 with padding, as libsodium's ORIGINAL variant and Python's b64encode write it. */
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The egress rule for customer-supplied upstream addresses (docs/operations.md "Customer-supplied upstream addresses (the egress guard)"). */
function checkApiBase(egress: ByokKeyServiceDeps["egress"], value: string): void {
  const refusal = egress.refusal(value);
  if (refusal !== undefined) throw badRequest(`api_base ${refusal}`);
}

/**
 * Stores the caller's key for a provider, replacing any previous one of the same scope: the
 * account's for an account-wide caller or the console, the caller's namespace's for a
 * namespace-bound one (never the account's). The box is kept as uploaded (sealed to the
 * current KEK); it is opened here only to refuse one that does not open or whose
 * `key_prefix` is not how it begins, and the plaintext is dropped at once.
 */
export async function upsertByokKey(deps: ByokKeyServiceDeps, caller: ByokCaller, input: ByokKeyUpload) {
  const { accountId, namespaceId } = caller;
  const provider = deps.catalog.getProvider(input.provider_name);
  if (!provider) throw badRequest(`provider_name: unknown provider "${input.provider_name}"`);
  if (!provider.byok) throw badRequest(`provider_name: provider "${input.provider_name}" does not accept BYOK keys`);
  const current = await deps.keks.current();
  if (input.kek_id !== current.kek_id) {
    throw badRequest(`kek_id is not the current key-encryption key (${current.kek_id}): fetch GET /v1/byok/encryption-pubkey and seal again`);
  }
  if (!STANDARD_BASE64.test(input.ciphertext_b64)) throw badRequest("ciphertext_b64 must be standard base64 with padding");
  if (input.api_base !== undefined && input.api_base !== null) checkApiBase(deps.egress, input.api_base);
  if ([...input.key_prefix].length > MAX_KEY_PREFIX_CHARS) throw badRequest(`key_prefix must be at most ${MAX_KEY_PREFIX_CHARS} characters: the first few of the key`);
  const box = Buffer.from(input.ciphertext_b64, "base64");
  let plaintext: Uint8Array;
  try {
    plaintext = await deps.keks.open(current.kek_id, new Uint8Array(box));
  } catch (error) {
    if (error instanceof SealedBoxError) throw badRequest("ciphertext_b64 does not open: seal the key with crypto_box_seal to the current public key");
    throw error;
  }
  const keyLength = plaintext.length;
  const prefix = new TextEncoder().encode(input.key_prefix);
  const prefixMatches = isPrefixOf(prefix, plaintext);
  plaintext.fill(0);
  if (keyLength === 0) throw badRequest("ciphertext_b64 seals an empty key");
  if (!prefixMatches) throw badRequest("key_prefix must be the first characters of the sealed key");
  // The prefix is shown in listings: it must stay a hint, never most of the key.
  if (prefix.length * 2 > keyLength) throw badRequest("key_prefix must be a short prefix of the key, not the key");
  // Each scope has its own unique index (sql/migrations/0022): the upsert names the one it replaces in.
  await upsertStoredByokKey(deps.db.sql, {
    accountId,
    namespaceId,
    providerName: input.provider_name,
    kekId: current.kek_id,
    box,
    keyPrefix: input.key_prefix,
    apiBase: input.api_base ?? null,
  });
  deps.byokKeys.invalidate(accountId, input.provider_name);
  return { provider_name: input.provider_name, kek_id: current.kek_id, key_prefix: input.key_prefix };
}

/** Provider ids are short slugs; anything else cannot have a key (the same 404 as a missing one). */
const PROVIDER_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** A namespace id as newId mints it; anything else names no key (and never reaches SQL). */
const NAMESPACE_ID = /^ns_[A-Za-z0-9_-]{1,64}$/;

/**
 * Deletes one key: a namespace-bound caller's namespace's own (the account's stays; it is
 * read-only to such a caller), an account-wide caller's or the console's the account's, or
 * with `namespaceId` that namespace's. Any key outside the caller's reach is the same 404 as
 * a missing one.
 */
export async function deleteByokKey(deps: ByokKeyServiceDeps, caller: ByokCaller, providerName: string, namespaceId?: string) {
  const { accountId } = caller;
  if (!PROVIDER_ID.test(providerName)) throw notFound("BYOK key");
  if (namespaceId !== undefined && !NAMESPACE_ID.test(namespaceId)) throw notFound("BYOK key");
  if (caller.namespaceId !== null && namespaceId !== undefined && namespaceId !== caller.namespaceId) throw notFound("BYOK key");
  const scope = caller.namespaceId ?? namespaceId ?? null;
  const deleted = await deleteStoredByokKey(deps.db.sql, accountId, providerName, scope);
  deps.byokKeys.invalidate(accountId, providerName);
  if (!deleted) throw notFound("BYOK key");
  return { deleted: true as const };
}
