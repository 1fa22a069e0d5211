import { CliError } from "../cli-error";
import type { Command, CommandContext } from "../command";
import { formatFields, formatTimestamp } from "../format-table";
import { listData, print, printJson } from "../output";
import { Session } from "../session";

interface Identity {
  account_id: string | null;
  namespace_id: string | null;
  scopes: string[] | null;
}

/** A call whose refusal (403, 404) leaves a field unknown; a 401 or an unreachable server still fails the command. */
async function optional<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof CliError && error.status !== undefined && error.status !== 401) return undefined;
    throw error;
  }
}

/**
 * What the server tells an API key about itself. There is no introspection route, so each
 * field comes from the route that shows it, when the key holds that route's scope:
 * the namespace from GET /v1/usage (usage:read; null there means an account-wide key),
 * the scopes from the key's own entry in the namespace's key list (keys:read), the
 * account from GET /v1/account (user:read).
 */
async function apiKeyIdentity(session: Session, keyId: string): Promise<Identity & { usageKnown: boolean }> {
  const usage = (await optional(() => session.call("GET", "/v1/usage"))) as { namespace_id?: string | null } | undefined;
  const keys = await optional(() => session.call("GET", session.namespacePath("/keys")));
  const own = listData<{ id: string; scopes: string[] }>(keys).find((key) => key.id === keyId);
  const account = (await optional(() => session.call("GET", "/v1/account"))) as { id?: string } | undefined;
  return {
    account_id: typeof account?.id === "string" ? account.id : null,
    namespace_id: usage?.namespace_id ?? null,
    scopes: own?.scopes ?? null,
    usageKnown: usage !== undefined,
  };
}

async function runWhoami(context: CommandContext): Promise<void> {
  const session = Session.open(context.env);
  const stored = session.stored;
  if (stored) {
    const identity: Identity = { account_id: stored.account_id, namespace_id: stored.namespace_id, scopes: stored.scope.split(" ").filter(Boolean) };
    if (context.json) return printJson(context, identity);
    return print(
      context,
      formatFields([
        ["server", stored.server],
        ["account", identity.account_id],
        ["namespace", identity.namespace_id],
        ["scopes", identity.scopes!.join(" ")],
        ["credential", "signed in with `switchyard login`"],
        ["token expires", `${formatTimestamp(stored.expires_at)} (refreshed automatically)`],
      ]),
    );
  }
  const keyId = session.apiKeyId!;
  const { usageKnown, ...identity } = await apiKeyIdentity(session, keyId);
  if (context.json) return printJson(context, { ...identity, api_key_id: keyId });
  const unknown = (scope: string) => `unknown (the key lacks ${scope})`;
  print(
    context,
    formatFields([
      ["server", session.server],
      ["account", identity.account_id ?? unknown("user:read")],
      ["namespace", usageKnown ? (identity.namespace_id ?? "all (an account-wide key)") : unknown("usage:read")],
      ["scopes", identity.scopes?.join(" ") ?? (usageKnown && identity.namespace_id === null ? "unknown (an account-wide key is not listed)" : unknown("keys:read"))],
      ["credential", `SWITCHYARD_API_KEY (key ${keyId})`],
    ]),
  );
}

export const whoamiCommand: Command = {
  path: ["whoami"],
  summary: "show the signed-in account, namespace and scopes",
  synopsis: "",
  arguments: [],
  options: [],
  notes: [
    "--json prints {account_id, namespace_id, scopes}. With SWITCHYARD_API_KEY the fields come",
    "from the server, each only when the key holds the scope of the route that shows it",
    "(null otherwise), and api_key_id is added.",
  ],
  run: runWhoami,
};
