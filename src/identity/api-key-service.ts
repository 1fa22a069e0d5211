import type { Caller, Principal } from "../auth/principal";
import { ALL_SCOPES, firstScopeNotHeld, hasScope, isControlPlaneScope, isValidScope } from "../auth/scopes";
import { mintApiKeyToken } from "../auth/tokens";
import { ApiError, badRequest, notFound } from "../errors/api-error";
import { insertApiKey, listAccountWideKeys, listNamespaceKeys, type ApiKeyRow } from "../db/queries/api-keys";
import { revokeCredential, type CredentialOwner } from "./credential-revocation";
import type { IdentityDeps } from "./identity-deps";
import type { Tenant } from "./tenant";

/** What the key service uses: the database, and the credential cache a revoked key leaves. */
export type KeyServiceDeps = Pick<IdentityDeps, "db" | "credentials">;

export interface CreateKeyInput {
  display_name: string;
  scopes: string[];
  expires_at?: string;
}

/** An API key as a listing or a page shows it (never its secret). */
export interface ApiKey {
  id: string;
  displayName: string;
  /** The token's first characters, enough to tell keys apart. */
  keyPrefix: string;
  scopes: string[];
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

/** A key just minted: the only time its token is seen. */
export interface MintedApiKey {
  token: string;
  key: ApiKey;
}

function apiKeyOf(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    displayName: row.display_name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
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
export async function createKey(
  deps: KeyServiceDeps,
  caller: Caller,
  namespaceId: string,
  input: CreateKeyInput,
  parent: Pick<Principal, "kind" | "id" | "expiresAt"> | null = null,
): Promise<MintedApiKey> {
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
  return { token: minted.token, key: apiKeyOf(row) };
}

/** The namespace's keys, revoked and expired ones included, oldest first. */
export async function listKeys(deps: KeyServiceDeps, tenant: Tenant): Promise<ApiKey[]> {
  return (await listNamespaceKeys(deps.db.sql, tenant.namespaceId, tenant.accountId)).map(apiKeyOf);
}

/** Revokes a key of `owner` through the one revocation (credential-revocation.ts); anyone else's is the 404 of a missing one. */
async function revokeOwnedKey(deps: KeyServiceDeps, owner: CredentialOwner, keyId: string): Promise<{ revoked: true }> {
  const revoked = await revokeCredential({ sql: deps.db.sql, credentials: deps.credentials }, { kind: "api_key", id: keyId, owner });
  if (!revoked) throw notFound("key");
  return { revoked: true };
}

/** Revokes one of the namespace's keys; another tenant's is the 404 of a missing one. */
export function revokeKey(deps: KeyServiceDeps, tenant: Tenant, keyId: string): Promise<{ revoked: true }> {
  return revokeOwnedKey(deps, tenant, keyId);
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
export async function listAccountKeys(deps: KeyServiceDeps, caller: Pick<Caller, "accountId" | "namespaceId">): Promise<ApiKey[]> {
  requireAccountWide(caller);
  return (await listAccountWideKeys(deps.db.sql, caller.accountId)).map(apiKeyOf);
}

/**
 * Revokes an account-wide key like any other key: it stops working at once here (within
 * CREDENTIAL_CACHE_TTL_MS elsewhere) and takes the keys minted with it along. Another
 * account's key, or a namespace's, is the 404 of a missing one.
 */
export async function revokeAccountKey(deps: KeyServiceDeps, caller: Pick<Caller, "accountId" | "namespaceId">, keyId: string): Promise<{ revoked: true }> {
  requireAccountWide(caller);
  return revokeOwnedKey(deps, { accountId: caller.accountId, namespaceId: null }, keyId);
}
