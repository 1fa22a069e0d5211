import { CliError, notSignedIn } from "../cli-error";
import type { Command } from "../command";
import { configDirectory, CredentialStore, type StoredCredential } from "../credential-store";
import { errorDescription, sendRequest } from "../http-client";
import { CLI_CLIENT_ID, discoverOauthEndpoints, type OauthEndpoints } from "../oauth-metadata";
import { print, printJson } from "../output";

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

export const logoutCommand: Command = {
  path: ["logout"],
  summary: "revoke the stored sign-in at the server and delete it",
  synopsis: "",
  arguments: [],
  options: [],
  notes: [
    "The credential is deleted only once the server has revoked it, so a failed logout",
    "can be retried. SWITCHYARD_API_KEY is ignored (an API key is revoked with `keys revoke`).",
  ],
  async run(context) {
    const store = new CredentialStore(configDirectory(context.env));
    const stored = store.read();
    if (!stored) throw notSignedIn("not signed in, nothing to log out of");
    await revokeGrant(stored.server, await discoverOauthEndpoints(stored.server), stored);
    store.remove();
    if (context.json) printJson(context, { revoked: true });
    else print(context, `Signed out of ${stored.server}; the stored credential is deleted.`);
  },
};
