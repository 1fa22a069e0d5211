import type { Caller, Principal } from "../../auth/principal";
import { ALL_SCOPES, firstScopeNotHeld, hasScope, isControlPlaneScope, isValidScope } from "../../auth/scopes";
import { mintApiKeyToken } from "../../auth/tokens";
import { ApiError, badRequest } from "../../errors/api-error";
import { insertApiKey, listAccountWideKeys, listNamespaceKeys, revokeAccountWideKey, revokeNamespaceKey, type ApiKeyRow } from "../../db/queries/api-keys";
import type { Services } from "../../services";
import { revokeCredential } from "../credential-revocation";
import { isoOrNull } from "../serialize";
import type { Tenant } from "../tenant";

/** What the key service uses: the database, and the credential cache a revoked key leaves. */
export type KeyServiceDeps = Pick<Services, "db" | "credentials">;

export interface CreateKeyInput {
  display_name: string;
  scopes: string[];
  expires_at?: string;
}

export function keyEnvelope(row: ApiKeyRow) {
  return {
    id: row.id,
    display_name: row.display_name,
    key_prefix: row.key_prefix,
    scopes: row.scopes,
    expires_at: isoOrNull(row.expires_at),
    last_used_at: isoOrNull(row.last_used_at),
    revoked_at: isoOrNull(row.revoked_at),
    created_at: row.created_at.toISOString(),
  };
}

/** RFC 3339 date-time with an explicit offset (what every SDK sends). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * The concrete scopes a requested list stands for today, in the order requested: a
 * wildcard such as `byok:*` is stored as the actions it covers now, so that an action
 * added to the service later does not widen a key minted before it existed.
 */
export function concreteScopes(requested: readonly string[]): string[] {
  const expanded = requested.flatMap((scope) => (scope.endsWith(":*") ? ALL_SCOPES.filter((known) => hasScope([scope], known)) : [scope]));
  return [...new Set(expanded)];
}

export function parseRfc3339(value: string, field: string): Date {
  const date = new Date(value);
  if (!RFC3339.test(value) || Number.isNaN(date.getTime())) throw badRequest(`${field} must be an RFC 3339 date-time`);
  return date;
}

/**
 * Mints a namespace-baked key. The requested scopes must be a subset of the
 * caller's effective scopes (RFC 6749 §3.3, no upscaling), and a key bound to a
 * namespace never carries the account's control-plane scopes. A key minted by a
 * credential (`parent`: a key or an OAuth access token; none in the console, nor for a
 * person signed in through the first-party CLI: see key-routes.ts) expires no
 * later than it and remembers it, so that it dies with it.
 */
export async function createKey(deps: KeyServiceDeps, caller: Caller, namespaceId: string, input: CreateKeyInput, parent: Pick<Principal, "kind" | "id" | "expiresAt"> | null = null) {
  const parentExpiresAt = parent?.expiresAt ?? null;
  const scopes = [...new Set(input.scopes)];
  const invalid = scopes.find((scope) => !isValidScope(scope));
  if (invalid !== undefined) throw badRequest(`unknown scope: ${invalid}`);
  const controlPlane = scopes.find(isControlPlaneScope);
  if (controlPlane !== undefined) throw badRequest(`scope ${controlPlane} cannot be granted to a namespace-bound key`);
  const notHeld = firstScopeNotHeld(caller.scopes, scopes);
  if (notHeld !== undefined) throw new ApiError("permission_denied", `cannot grant scope not held by the caller: ${notHeld}`);
  const expiresAt = input.expires_at === undefined ? null : parseRfc3339(input.expires_at, "expires_at");
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw badRequest("expires_at must be in the future");
  const boundedExpiry =
    parentExpiresAt !== null && (expiresAt === null || expiresAt.getTime() > parentExpiresAt) ? new Date(parentExpiresAt) : expiresAt;

  const minted = mintApiKeyToken();
  const row = await insertApiKey(deps.db.sql, {
    id: minted.keyId,
    accountId: caller.accountId,
    namespaceId,
    displayName: input.display_name,
    keyPrefix: minted.keyPrefix,
    tokenHash: minted.tokenHash,
    scopes: concreteScopes(scopes),
    expiresAt: boundedExpiry,
    parentApiKeyId: parent?.kind === "api_key" ? parent.id : null,
    parentOauthGrantId: parent?.kind === "oauth_token" ? parent.id : null,
  });
  return {
    token: minted.token,
    id: row.id,
    key_prefix: row.key_prefix,
    display_name: row.display_name,
    scopes: row.scopes,
    expires_at: isoOrNull(row.expires_at),
    created_at: row.created_at.toISOString(),
  };
}

/** The namespace's keys, revoked and expired ones included, oldest first. */
export function listKeys(deps: KeyServiceDeps, tenant: Tenant): Promise<ApiKeyRow[]> {
  return listNamespaceKeys(deps.db.sql, tenant.namespaceId, tenant.accountId);
}

/** Revokes one of the namespace's keys; another tenant's is the 404 of a missing one. */
export function revokeKey(deps: KeyServiceDeps, tenant: Tenant, keyId: string): Promise<{ revoked: true }> {
  return revokeCredential(deps, keyId, "key", () => revokeNamespaceKey(deps.db.sql, keyId, tenant.namespaceId, tenant.accountId));
}

/**
 * Account-wide keys (bound to no namespace: the one `POST /admin/accounts` issues with
 * each account) act in every namespace, so they are listed and revoked at the account,
 * by an account-wide caller only (an account-wide key, a person signed in to the
 * console); a namespace-bound credential is refused.
 */
function requireAccountWide(caller: Pick<Caller, "namespaceId">): void {
  if (caller.namespaceId !== null) throw new ApiError("permission_denied", "a namespace-bound credential cannot reach the account-wide keys");
}

/** The account's account-wide keys, revoked ones included, oldest first. */
export function listAccountKeys(deps: KeyServiceDeps, caller: Pick<Caller, "accountId" | "namespaceId">): Promise<ApiKeyRow[]> {
  requireAccountWide(caller);
  return listAccountWideKeys(deps.db.sql, caller.accountId);
}

/**
 * Revokes an account-wide key like any other key: it stops working at once here (within
 * CREDENTIAL_CACHE_TTL_MS elsewhere) and takes the keys minted with it along. Another
 * account's key, or a namespace's, is the 404 of a missing one.
 */
export async function revokeAccountKey(deps: KeyServiceDeps, caller: Pick<Caller, "accountId" | "namespaceId">, keyId: string): Promise<{ revoked: true }> {
  requireAccountWide(caller);
  return revokeCredential(deps, keyId, "key", () => revokeAccountWideKey(deps.db.sql, keyId, caller.accountId));
}
