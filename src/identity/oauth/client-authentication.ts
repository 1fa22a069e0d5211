import type { Sql } from "../../db/connect-database";
import { constantTimeEqual, sha256 } from "../../auth/tokens";
import { findOauthClient, type OauthClient } from "./oauth-client";
import { ApiError, invalidClient } from "../../errors/api-error";

interface BasicCredentials {
  clientId: string;
  secret: string;
}

/** One form-urlencoded part of HTTP Basic client credentials (RFC 6749 §2.3.1). */
function formDecode(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

/** `Authorization: Basic …` as client credentials; null when the header is not Basic. */
function basicCredentials(headers: Headers): BasicCredentials | null {
  const header = headers.get("authorization");
  if (!header || !/^basic\s/i.test(header)) return null;
  const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  const clientId = colon > 0 ? formDecode(decoded.slice(0, colon)) : undefined;
  const secret = colon > 0 ? formDecode(decoded.slice(colon + 1)) : undefined;
  if (!clientId || secret === undefined) throw invalidClient("malformed Basic client credentials", true);
  return { clientId, secret };
}

/**
 * Who is calling a token, device authorization or revocation endpoint. Public clients
 * name themselves with `client_id`; confidential clients must also prove their secret,
 * in the body (`client_secret_post`) or with HTTP Basic (`client_secret_basic`), not
 * both. A failure is `invalid_client`: 401 when the client tried the Authorization
 * header, else 400.
 */
export async function authenticateClient(sql: Sql, params: Map<string, string>, headers: Headers): Promise<OauthClient> {
  const basic = basicCredentials(headers);
  const bodyId = params.get("client_id");
  const bodySecret = params.get("client_secret");
  if (basic && bodySecret !== undefined) throw new ApiError("invalid_request", "use one client authentication method, not both");
  if (basic && bodyId !== undefined && bodyId !== basic.clientId) throw new ApiError("invalid_request", "client_id differs from the Basic credentials");
  const clientId = basic?.clientId ?? bodyId;
  if (clientId === undefined) throw new ApiError("invalid_request", "missing parameter: client_id");
  const client = await findOauthClient(sql, clientId);
  if (!client) throw invalidClient("unknown client", basic !== null);
  if (client.clientType === "confidential") {
    const secret = basic?.secret ?? bodySecret;
    if (secret === undefined) throw invalidClient("client authentication required", basic !== null);
    if (!client.secretHash || !constantTimeEqual(sha256(secret), client.secretHash)) {
      throw invalidClient("client authentication failed", basic !== null);
    }
  }
  return client;
}

/** `unauthorized_client` unless the client may use this grant type. */
export function assertGrantAllowed(client: OauthClient, grantType: string): void {
  if (!client.allowedGrantTypes.includes(grantType)) {
    throw new ApiError("unauthorized_client", `this client may not use the ${grantType} grant`);
  }
}
