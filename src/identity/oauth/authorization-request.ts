import { ApiError, badRequest, notFound } from "../../errors/api-error";
import { findLiveNamespace } from "../../db/queries/namespaces";
import { insertAuthorizationCode, sweepAuthorizationCodes } from "../../db/queries/oauth-authorization-codes";
import type { Approver } from "./approver";
import { AUTHORIZATION_CODE_GRANT, findOauthClient } from "./oauth-client";
import type { OauthDeps } from "./oauth-deps";
import { grantableScopes, issuedScopes, requestedScopes } from "./issued-scopes";
import { mintAuthorizationCode } from "./oauth-secrets";
import { isPkceValue } from "./pkce";

/** A checked authorization request (RFC 6749 §4.1.1 with PKCE), ready for consent. */
export interface AuthorizeRequest {
  clientId: string;
  clientName: string;
  /** Exactly one of the client's registered redirect URIs. */
  redirectUri: string;
  /** As requested (or the client's default); the consent grants what the approver holds of them. */
  scopes: string[];
  state: string | null;
  /** The S256 challenge; null only for a confidential client that sent none. */
  codeChallenge: string | null;
}

export type AuthorizeCheck =
  /** Nothing trustworthy to redirect to: show the error, never redirect (no open redirect). */
  | { kind: "show_error"; description: string }
  /** An error the client hears at its registered redirect URI. */
  | { kind: "redirect"; location: string }
  | { kind: "ok"; request: AuthorizeRequest };

/** Expired authorization codes are deleted this long after their expiry, when the next one is issued. */
const CODE_SWEEP_GRACE_MS = 60 * 60 * 1000;

/** The redirect URI with the response parameters added to its query. */
function redirectTo(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.append(name, value);
  return url.toString();
}

const errorRedirect = (redirectUri: string, error: string, description: string, state: string | null): AuthorizeCheck => ({
  kind: "redirect",
  location: redirectTo(redirectUri, { error, error_description: description, state }),
});

/**
 * `GET /oauth/authorize`'s query, checked before anyone is asked to consent. The client
 * and its redirect URI are checked first: an unknown client, or a redirect URI that is
 * missing or not registered character for character, is shown, never redirected to.
 * Every later error goes back to that redirect URI with `error` and `state`.
 */
export async function checkAuthorizeRequest(deps: OauthDeps, query: Record<string, string | undefined>): Promise<AuthorizeCheck> {
  const clientId = query.client_id;
  const client = clientId ? await findOauthClient(deps.sql, clientId) : undefined;
  if (!client) return { kind: "show_error", description: "unknown client_id" };
  const redirectUri = query.redirect_uri;
  if (!redirectUri) return { kind: "show_error", description: "missing redirect_uri" };
  if (!client.redirectUris.includes(redirectUri)) return { kind: "show_error", description: "redirect_uri is not registered for this client" };
  try {
    new URL(redirectUri);
  } catch {
    return { kind: "show_error", description: "redirect_uri is not an absolute URL" };
  }
  const state = query.state ?? null;
  if (query.response_type !== "code") return errorRedirect(redirectUri, "unsupported_response_type", "response_type must be code", state);
  if (!client.allowedGrantTypes.includes(AUTHORIZATION_CODE_GRANT)) {
    return errorRedirect(redirectUri, "unauthorized_client", "this client may not use the authorization code grant", state);
  }
  const scopes = requestedScopes(query.scope, client);
  if (!scopes) return errorRedirect(redirectUri, "invalid_scope", "unknown scope requested", state);
  if (grantableScopes(scopes, client).length === 0) return errorRedirect(redirectUri, "invalid_scope", "none of the requested scopes can be granted to this client", state);
  const challenge = query.code_challenge ?? null;
  const method = query.code_challenge_method;
  if (challenge === null && method !== undefined) return errorRedirect(redirectUri, "invalid_request", "code_challenge_method without code_challenge", state);
  if (challenge !== null && method !== "S256") return errorRedirect(redirectUri, "invalid_request", "code_challenge_method must be S256", state);
  if (challenge !== null && !isPkceValue(challenge)) return errorRedirect(redirectUri, "invalid_request", "malformed code_challenge", state);
  if (challenge === null && client.clientType === "public") {
    return errorRedirect(redirectUri, "invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256", state);
  }
  return { kind: "ok", request: { clientId: client.clientId, clientName: client.clientName, redirectUri, scopes, state, codeChallenge: challenge } };
}

/**
 * The consent was given: an authorization code (single use, short-lived) bound to the
 * namespace, with requested ∩ approver's ∩ client's scopes. Returns the redirect
 * Location carrying `code` and `state`. 404 for a namespace the approver's account does
 * not own; 403 when no requested scope is left to grant.
 */
export async function issueAuthorizationCode(deps: OauthDeps, request: AuthorizeRequest, approver: Approver, namespaceId: string): Promise<string> {
  if (!(await findLiveNamespace(deps.sql, namespaceId, approver.accountId))) throw notFound("namespace");
  const client = await findOauthClient(deps.sql, request.clientId);
  if (!client || !client.redirectUris.includes(request.redirectUri)) throw badRequest("the client is no longer registered");
  const scopes = issuedScopes(request.scopes, approver.scopes, client.allowedScopes);
  if (scopes.length === 0) throw new ApiError("permission_denied", `the approving credential holds none of the requested scopes (${request.scopes.join(" ")})`);
  const code = mintAuthorizationCode();
  await sweepAuthorizationCodes(deps.sql, new Date(Date.now() - CODE_SWEEP_GRACE_MS));
  await insertAuthorizationCode(deps.sql, {
    codeHash: code.hash,
    clientId: client.clientId,
    oauthClientRef: client.ref,
    accountId: approver.accountId,
    namespaceId,
    redirectUri: request.redirectUri,
    scopes,
    codeChallenge: request.codeChallenge,
    expiresAt: new Date(Date.now() + deps.lifetimes.authorizationCodeSecs * 1000),
  });
  return redirectTo(request.redirectUri, { code: code.value, state: request.state });
}

/** The person refused: back to the client with `access_denied`. */
export function denyAuthorization(request: AuthorizeRequest): string {
  return redirectTo(request.redirectUri, { error: "access_denied", error_description: "the request was denied", state: request.state });
}
