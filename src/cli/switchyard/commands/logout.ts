import { notSignedIn } from "../cli-error";
import type { Command } from "../command";
import { configDirectory, CredentialStore } from "../credential-store";
import { discoverOauthEndpoints } from "../oauth-metadata";
import { print, printJson } from "../output";
import { revokeGrant } from "./revoke-grant";

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
