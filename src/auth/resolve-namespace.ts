import { notFound } from "../errors/api-error";
import type { Sql } from "../db/connect-database";
import { findLiveNamespace, oldestLiveNamespace, type NamespaceRow } from "../db/queries/namespaces";
import type { Caller } from "./principal";

/**
 * The namespace a management path names. `me` is the credential's own namespace
 * (for an account-wide credential: the account's oldest live namespace). Anything
 * the caller does not own, anything archived, and anything other than a
 * namespace-baked credential's own namespace is the same 404 as a missing one.
 */
export async function resolveNamespace(sql: Sql, principal: Caller, nsid: string): Promise<NamespaceRow> {
  let namespaceId: string | undefined = nsid;
  if (nsid === "me") namespaceId = principal.namespaceId ?? (await oldestLiveNamespace(sql, principal.accountId));
  else if (principal.namespaceId !== null && principal.namespaceId !== nsid) namespaceId = undefined;
  const namespace = namespaceId ? await findLiveNamespace(sql, namespaceId, principal.accountId) : undefined;
  if (!namespace) throw notFound("namespace");
  return namespace;
}
