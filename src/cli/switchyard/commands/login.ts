import { isValidScope } from "../../../auth/scopes";
import { UsageError } from "../cli-error";
import type { Command, CommandContext } from "../command";
import { configDirectory, CredentialStore, type StoredCredential } from "../credential-store";
import { pollForToken, requestDeviceCode, type DeviceAuthorization } from "../device-login";
import { discoverOauthEndpoints } from "../oauth-metadata";
import { optionValue } from "../parse-args";
import { print } from "../output";
import { configuredServerUrl, DEFAULT_SERVER_URL } from "../server-url";
import { credentialFromLogin } from "../token-response";
import { revokeGrant } from "./logout";

/** What a sign-in asks for unless --scope says otherwise: everything but billing writes and control-plane scopes. */
export const DEFAULT_LOGIN_SCOPES = "inference:invoke usage:read keys:read keys:write billing:read policy:read policy:write byok:read byok:write namespace:read";

function requestedScope(context: CommandContext): string {
  const given = optionValue(context.args, "scope");
  if (given === undefined) return DEFAULT_LOGIN_SCOPES;
  const scopes = [...new Set(given.split(/[\s,]+/).filter(Boolean))];
  if (scopes.length === 0) throw new UsageError("--scope needs at least one scope", context.usage);
  const unknown = scopes.find((scope) => !isValidScope(scope));
  if (unknown !== undefined) throw new UsageError(`unknown scope: ${unknown}`, context.usage);
  return scopes.join(" ");
}

function printInstructions(context: CommandContext, authorization: DeviceAuthorization): void {
  if (context.json) {
    const { user_code, verification_uri, verification_uri_complete, expires_in } = authorization;
    context.io.stdout(`${JSON.stringify({ user_code, verification_uri, verification_uri_complete: verification_uri_complete ?? null, expires_in })}\n`);
    return;
  }
  const minutes = Math.max(1, Math.round(authorization.expires_in / 60));
  const lines = [
    "To sign in, open this page in a browser:",
    `  ${authorization.verification_uri}`,
    "and enter the code:",
    `  ${authorization.user_code}`,
  ];
  if (authorization.verification_uri_complete) lines.push("or open this link, which carries the code:", `  ${authorization.verification_uri_complete}`);
  lines.push(`Waiting for approval (the code expires in ${minutes} minute${minutes === 1 ? "" : "s"})…`);
  print(context, lines.join("\n"));
}

export const loginCommand: Command = {
  path: ["login"],
  summary: "sign in with a code approved in the browser (OAuth device flow)",
  synopsis: '[--scope "<scope> <scope>…"]',
  arguments: [],
  options: [{ name: "scope", value: '"<scopes>"', description: `space-separated scopes to ask for (default: ${DEFAULT_LOGIN_SCOPES})` }],
  notes: [
    "Prints a URL and a code, waits until the code is approved (or denied, or expires), then",
    "stores the credential, which is refreshed automatically. SWITCHYARD_API_KEY is ignored.",
    "--json prints two JSON lines: {user_code, verification_uri, verification_uri_complete,",
    "expires_in} at once, then {account_id, namespace_id, scopes} once signed in.",
  ],
  async run(context) {
    const scope = requestedScope(context);
    const server = configuredServerUrl(context.env) ?? DEFAULT_SERVER_URL;
    const endpoints = await discoverOauthEndpoints(server);
    const authorization = await requestDeviceCode(server, endpoints, scope);
    printInstructions(context, authorization);
    const credential = credentialFromLogin(await pollForToken(server, endpoints, authorization), server, scope);

    const store = new CredentialStore(configDirectory(context.env));
    let previous: StoredCredential | undefined;
    try {
      previous = store.read();
    } catch {
      previous = undefined; // a damaged file is simply replaced
    }
    store.write(credential);
    // The sign-in this one replaces would otherwise stay valid at the server, unseen.
    if (previous && previous.server === server && previous.refresh_token !== credential.refresh_token) {
      await revokeGrant(server, endpoints, previous).catch(() => undefined);
    }

    const scopes = credential.scope.split(" ").filter(Boolean);
    if (context.json) {
      context.io.stdout(`${JSON.stringify({ account_id: credential.account_id, namespace_id: credential.namespace_id, scopes })}\n`);
      return;
    }
    print(
      context,
      [
        `Signed in to ${server}: account ${credential.account_id}, namespace ${credential.namespace_id}.`,
        `Scopes: ${scopes.join(" ") || "(none)"}`,
        `Credential stored in ${store.path}`,
      ].join("\n"),
    );
  },
};
