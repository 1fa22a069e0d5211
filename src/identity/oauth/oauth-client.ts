import type { Sql } from "../../db/connect-database";
import { findOauthClientByClientId, findOauthClientOwnerEmail, type OauthClientType } from "../../db/queries/oauth-clients";
import { ALL_SCOPES, CONTROL_PLANE_SCOPES } from "../../auth/scopes";
import { FIRST_PARTY_CLIENT_ID } from "../../auth/first-party-client";

export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
export const AUTHORIZATION_CODE_GRANT = "authorization_code";
export const REFRESH_TOKEN_GRANT = "refresh_token";

/** A client as the authorization server sees it: the built-in CLI or a registered one. */
export interface OauthClient {
  clientId: string;
  clientName: string;
  clientType: OauthClientType;
  /** oauth_clients.id of a registered client (its `oauth_client` principal); null for the built-in one. */
  ref: string | null;
  secretHash: Uint8Array | null;
  redirectUris: readonly string[];
  allowedScopes: readonly string[];
  allowedGrantTypes: readonly string[];
  /** What a request that names no scope gets. */
  defaultScopes: readonly string[];
}

/** The scope the CLI asks for when the user names none. */
export const CLI_DEFAULT_SCOPES = [
  "inference:invoke",
  "usage:read",
  "keys:read",
  "keys:write",
  "billing:read",
  "policy:read",
  "policy:write",
  "byok:read",
  "byok:write",
  "namespace:read",
] as const;

/**
 * The `switchyard` CLI: a public client that exists without a row. It signs in with the
 * device flow and refreshes; it may be granted every scope but the control-plane ones.
 */
export const SWITCHYARD_CLI: OauthClient = {
  clientId: FIRST_PARTY_CLIENT_ID,
  clientName: "Switchyard CLI",
  clientType: "public",
  ref: null,
  secretHash: null,
  redirectUris: [],
  allowedScopes: ALL_SCOPES.filter((scope) => !CONTROL_PLANE_SCOPES.has(scope)),
  allowedGrantTypes: [DEVICE_CODE_GRANT, REFRESH_TOKEN_GRANT],
  defaultScopes: CLI_DEFAULT_SCOPES,
};

/** A client id worth a database lookup: printable ASCII of a sane length. */
const CLIENT_ID_SHAPE = /^[\x21-\x7e]{1,200}$/;

/** The client a `client_id` names; undefined when there is none. */
export async function findOauthClient(sql: Sql, clientId: string): Promise<OauthClient | undefined> {
  if (clientId === SWITCHYARD_CLI.clientId) return SWITCHYARD_CLI;
  if (!CLIENT_ID_SHAPE.test(clientId)) return undefined;
  const row = await findOauthClientByClientId(sql, clientId);
  if (!row) return undefined;
  return {
    clientId: row.client_id,
    clientName: row.client_name,
    clientType: row.client_type,
    ref: row.id,
    secretHash: row.client_secret_hash,
    redirectUris: row.redirect_uris,
    allowedScopes: row.allowed_scopes,
    allowedGrantTypes: row.allowed_grant_types,
    defaultScopes: row.allowed_scopes,
  };
}

/**
 * Who stands behind a client, as the device and consent pages show it: the built-in CLI
 * is first-party; a registered client is named by the email of the account that
 * registered it (any account can register one, under any name that does not imitate
 * the CLI's: see client-name.ts).
 */
export type ClientPublisher = { firstParty: true } | { firstParty: false; ownerEmail: string | undefined };

export async function clientPublisher(sql: Sql, client: OauthClient): Promise<ClientPublisher> {
  if (client.ref === null) return { firstParty: true };
  return { firstParty: false, ownerEmail: await findOauthClientOwnerEmail(sql, client.ref) };
}
