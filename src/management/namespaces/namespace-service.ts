import type { Caller } from "../../auth/principal";
import { newId } from "../../ids";
import { isUniqueViolation } from "../../db/errors";
import { archiveNamespace, findLiveNamespace, insertNamespace, listLiveNamespaces, type NamespaceRow } from "../../db/queries/namespaces";
import { ApiError, conflict } from "../../errors/api-error";
import type { Services } from "../../services";
import { forgetCredentials } from "../../identity/credential-revocation";
import type { Tenant } from "../../identity/tenant";

/**
 * What the namespace service uses: the database, the credential cache an archive empties
 * of the namespace's keys and grants, and `me`, which an archive may move.
 */
export type NamespaceServiceDeps = Pick<Services, "db" | "credentials" | "me">;

/** A live namespace as a listing or a page shows it. */
export interface Namespace {
  id: string;
  name: string;
  createdAt: Date;
}

function namespaceOf(row: NamespaceRow): Namespace {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

export function namespaceEnvelope(namespace: Namespace) {
  return { id: namespace.id, name: namespace.name, created_at: namespace.createdAt.toISOString() };
}

/** The account's live namespaces, oldest first (what the console picks from). */
export async function accountNamespaces(deps: NamespaceServiceDeps, accountId: string): Promise<Namespace[]> {
  return (await listLiveNamespaces(deps.db.sql, accountId)).map(namespaceOf);
}

/** The namespaces a caller sees: a namespace-baked credential only its own. */
export async function listNamespaces(deps: NamespaceServiceDeps, caller: Caller): Promise<Namespace[]> {
  if (caller.namespaceId === null) return accountNamespaces(deps, caller.accountId);
  const own = await findLiveNamespace(deps.db.sql, caller.namespaceId, caller.accountId);
  return own ? [namespaceOf(own)] : [];
}

/** A new namespace of the caller's account; its name is unique among the live ones (409). */
export async function createNamespace(deps: NamespaceServiceDeps, caller: Caller, name: string): Promise<Namespace> {
  if (caller.namespaceId !== null) throw new ApiError("permission_denied", "a namespace-bound credential cannot create namespaces");
  try {
    return namespaceOf(await insertNamespace(deps.db.sql, newId("ns"), caller.accountId, name));
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`a namespace named "${name}" already exists`);
    throw error;
  }
}

/**
 * Archives a namespace: its keys, OAuth grants and clients, policies and BYOK keys are
 * destroyed, and this instance's credential cache forgets its keys and grants at once. If
 * it was the account's oldest, `me` moves to the next one, for every caller on this
 * instance at once (me-namespace.ts).
 */
export async function removeNamespace(deps: NamespaceServiceDeps, tenant: Tenant): Promise<{ deleted: true }> {
  const result = await archiveNamespace(deps.db.sql, tenant.namespaceId, tenant.accountId);
  if (result.outcome === "last_namespace") throw conflict("cannot delete the account's last namespace");
  if (result.outcome === "not_found") throw new ApiError("not_found", "namespace not found");
  forgetCredentials(deps, result.revokedKeyIds, result.destroyedGrantIds);
  deps.me.forget(tenant.accountId);
  return { deleted: true };
}
