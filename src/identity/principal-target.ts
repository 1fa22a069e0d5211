import type { Caller } from "../auth/principal";
import type { Sql } from "../db/connect-database";
import type { IdentityDeps } from "./identity-deps";
import { findKeyPrincipal } from "../db/queries/policies";
import { findApiKeyForAuth } from "../db/queries/api-keys";
import { findOauthClientPrincipal } from "../db/queries/oauth-clients";
import { findOauthGrantPrincipal } from "../db/queries/oauth-grants";
import { badRequest, notFound } from "../errors/api-error";
import { isPrincipalType, PRINCIPAL_TYPES, type PrincipalRef } from "../policy/effective-policy";
import { requestPrincipals } from "../policy/request-principals";

/** A principal the caller may name, with the namespace its requests are attributed to. */
export interface PrincipalTarget {
  principal: PrincipalRef;
  /** Null only for an account-wide key of an account with no live namespace. */
  namespaceId: string | null;
  /** For an OAuth grant issued to a registered client: that client's id (its requests carry it). */
  oauthClientId?: string | null;
  /** For a derived key: the keys and the grant it was minted through (its requests carry them). */
  ancestors?: { keyIds: readonly string[]; grantId: string | null };
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
 * account is distinguishable from a missing id. OAuth grants (ids as `GET …/oauth/tokens`
 * lists them) and registered clients (their `id`) belong to the namespace they were
 * issued in or registered by.
 */
export async function resolvePrincipalTarget(
  deps: Pick<IdentityDeps, "db" | "me">,
  caller: Caller,
  namespaceId: string,
  principal: PrincipalRef,
): Promise<PrincipalTarget> {
  const sql = deps.db.sql;
  switch (principal.type) {
    case "namespace":
      if (principal.id === namespaceId) return { principal, namespaceId };
      break;
    case "api_key": {
      const key = await findKeyPrincipal(sql, principal.id, caller.accountId);
      if (key && key.namespace_id === namespaceId) return { principal, namespaceId, ...(await keyAncestry(sql, principal.id)) };
      if (key && key.namespace_id === null && caller.namespaceId === null) {
        // An account-wide key's requests are attributed to `me`, as metering attributes them.
        const namespaceId = await deps.me.namespaceFor({ accountId: caller.accountId, namespaceId: null }, "fresh");
        return { principal, namespaceId, ...(await keyAncestry(sql, principal.id)) };
      }
      break;
    }
    case "oauth_token": {
      const grant = await findOauthGrantPrincipal(sql, principal.id, caller.accountId);
      if (grant && grant.namespace_id === namespaceId) return { principal, namespaceId, oauthClientId: grant.oauth_client_ref };
      break;
    }
    case "oauth_client": {
      const client = await findOauthClientPrincipal(sql, principal.id, caller.accountId);
      if (client && client.namespace_id === namespaceId) return { principal, namespaceId };
      break;
    }
  }
  throw notFound("principal");
}

/** The principals a request made as `target` carries (reference: a key's requests also carry its namespace). */
export function principalsOfTarget(target: PrincipalTarget): PrincipalRef[] {
  const { principal, namespaceId } = target;
  if (principal.type === "namespace") return [principal];
  if (principal.type === "oauth_client") return [principal];
  return requestPrincipals(
    namespaceId,
    { kind: principal.type, id: principal.id, ancestorKeyIds: target.ancestors?.keyIds, ancestorGrantId: target.ancestors?.grantId },
    target.oauthClientId ?? null,
  );
}

/**
 * What a key's requests also answer to, read as authentication reads it: the keys that
 * minted it and the grant (and that grant's client) at the root of the chain.
 */
async function keyAncestry(sql: Sql, keyId: string): Promise<Pick<PrincipalTarget, "ancestors" | "oauthClientId">> {
  const row = await findApiKeyForAuth(sql, keyId);
  if (!row || (row.ancestor_key_ids.length === 0 && row.ancestor_grant_id === null)) return {};
  return { ancestors: { keyIds: row.ancestor_key_ids, grantId: row.ancestor_grant_id }, oauthClientId: row.ancestor_client_id };
}
