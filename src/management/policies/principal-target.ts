import type { Principal } from "../../auth/principal";
import type { Sql } from "../../db/connect-database";
import { oldestLiveNamespace } from "../../db/queries/namespaces";
import { findKeyPrincipal } from "../../db/queries/policies";
import { badRequest, notFound } from "../../errors/api-error";
import { isPrincipalType, PRINCIPAL_TYPES, type PrincipalRef } from "../../policy/effective-policy";
import { requestPrincipals } from "../../policy/request-principals";

/** A principal the caller may name, with the namespace its requests are attributed to. */
export interface PrincipalTarget {
  principal: PrincipalRef;
  /** Null only for an account-wide key of an account with no live namespace. */
  namespaceId: string | null;
}

export function parsePrincipalType(value: unknown, field = "principal_type"): PrincipalRef["type"] {
  if (!isPrincipalType(value)) throw badRequest(`${field} must be one of ${PRINCIPAL_TYPES.map((type) => `"${type}"`).join(", ")}`);
  return value;
}

/**
 * A principal named in a namespace's policy routes, or the 404 of a missing one. What
 * the namespace may name: itself; its own API keys (ids as `GET …/keys` lists them);
 * and, when the caller is account-wide, the account's account-wide keys. A namespace
 * credential cannot reach principals outside its namespace, and nothing of another
 * account is distinguishable from a missing id. OAuth tokens and clients are not
 * issued yet: every id of those types is missing.
 */
export async function resolvePrincipalTarget(
  sql: Sql,
  caller: Principal,
  namespaceId: string,
  principal: PrincipalRef,
): Promise<PrincipalTarget> {
  switch (principal.type) {
    case "namespace":
      if (principal.id === namespaceId) return { principal, namespaceId };
      break;
    case "api_key": {
      const key = await findKeyPrincipal(sql, principal.id, caller.accountId);
      if (key && key.namespace_id === namespaceId) return { principal, namespaceId };
      if (key && key.namespace_id === null && caller.namespaceId === null) {
        return { principal, namespaceId: (await oldestLiveNamespace(sql, caller.accountId)) ?? null };
      }
      break;
    }
    case "oauth_token":
    case "oauth_client":
      break;
  }
  throw notFound("principal");
}

/** The principals a request made as `target` carries (reference: a key's requests also carry its namespace). */
export function principalsOfTarget(target: PrincipalTarget): PrincipalRef[] {
  const { principal, namespaceId } = target;
  if (principal.type === "namespace") return [principal];
  if (principal.type === "oauth_client") return [principal];
  return requestPrincipals(namespaceId, { kind: principal.type, id: principal.id });
}
