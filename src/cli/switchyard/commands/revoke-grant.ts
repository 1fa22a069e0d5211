import { CliError } from "../cli-error";
import type { StoredCredential } from "../credential-store";
import { errorDescription, sendRequest } from "../http-client";
import { CLI_CLIENT_ID, type OauthEndpoints } from "../oauth-metadata";

/**
 * Revokes a stored sign-in at the server (RFC 7009): the refresh token, which ends the
 * grant, then the access token in case the server keeps the two apart. The server
 * answers 200 for a token that is already invalid, so a repeat is harmless.
 */
export async function revokeGrant(server: string, endpoints: OauthEndpoints, credential: StoredCredential): Promise<void> {
  if (!endpoints.revocation) throw new CliError(`the server at ${server} offers no revocation endpoint`);
  const tokens: [string, string][] = [
    [credential.refresh_token, "refresh_token"],
    [credential.access_token, "access_token"],
  ];
  for (const [token, hint] of tokens) {
    const response = await sendRequest(server, {
      method: "POST",
      path: endpoints.revocation,
      form: { token, token_type_hint: hint, client_id: CLI_CLIENT_ID },
    });
    if (response.status !== 200) throw new CliError(`the server refused to revoke the sign-in: ${errorDescription(response)}`, undefined, response.status);
  }
}
