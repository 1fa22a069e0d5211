import { notFound } from "../errors/api-error";
import { findLiveNamespace } from "../db/queries/namespaces";
import type { Caller } from "../auth/principal";
import type { IdentityDeps } from "./identity-deps";

/** The account and namespace a management call acts in, once the caller's reach is checked. */
export interface Tenant {
  accountId: string;
  namespaceId: string;
}

export type TenantDeps = Pick<IdentityDeps, "db" | "me">;

/**
 * The one answer to "is this namespace the caller's": the namespace a management path
 * names (`{nsid}`, or `me` on the flat paths). `me` is what `MeNamespace` answers, read
 * fresh (me-namespace.ts: the credential's own namespace; for an account-wide credential,
 * the account's oldest live namespace). Anything the caller
 * does not own, anything archived, and anything other than a namespace-baked credential's
 * own namespace is the same 404 as a missing one. Routes call it with the path's `{nsid}`
 * and hand the services the `Tenant` it returns; the console builds the same `Tenant`
 * from the namespace its page picked.
 */
export async function resolveTenant(deps: TenantDeps, caller: Caller, nsid: string): Promise<Tenant> {
  const sql = deps.db.sql;
  let namespaceId: string | null = nsid;
  if (nsid === "me") namespaceId = await deps.me.namespaceFor(caller, "fresh");
  else if (caller.namespaceId !== null && caller.namespaceId !== nsid) namespaceId = null;
  const namespace = namespaceId ? await findLiveNamespace(sql, namespaceId, caller.accountId) : undefined;
  if (!namespace) throw notFound("namespace");
  return { accountId: caller.accountId, namespaceId: namespace.id };
}

/** The tenant a namespace-scoped route acts in: its path's `{nsid}`, `me` on the flat form. */
export function tenantOfPath(deps: TenantDeps, caller: Caller, params: Record<string, string> | undefined): Promise<Tenant> {
  return resolveTenant(deps, caller, params?.nsid ?? "me");
}
