import { isValidScope } from "../../../auth/scopes";
import { UsageError } from "../cli-error";
import type { Command } from "../command";
import { formatFields, formatTable, formatTimestamp } from "../format-table";
import { print, printJson, printListing } from "../output";
import { optionValue } from "../parse-args";
import { Session } from "../session";

interface ApiKeyEnvelope {
  id: string;
  display_name: string;
  key_prefix: string;
  scopes: string[];
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

function keyState(key: ApiKeyEnvelope, now = Date.now()): string {
  if (key.revoked_at) return "revoked";
  if (key.expires_at && Date.parse(key.expires_at) <= now) return "expired";
  return "active";
}

/** Whether the server bounded the key's expiry below the one asked for (none asked: never). */
function earlierThanAsked(granted: string | null, asked: string | undefined): boolean {
  if (granted === null) return false;
  return asked === undefined || Date.parse(granted) < Date.parse(asked);
}

export const keysListCommand: Command = {
  path: ["keys", "list"],
  summary: "list the namespace's API keys (never their secrets)",
  synopsis: "",
  arguments: [],
  options: [],
  async run(context) {
    const session = Session.open(context.env);
    printListing<ApiKeyEnvelope>(context, await session.call("GET", session.namespacePath("/keys")), {
      empty: "No API keys.",
      headers: ["id", "name", "prefix", "state", "scopes", "created", "last used", "expires"],
      row: (key) => [key.id, key.display_name, key.key_prefix, keyState(key), key.scopes.join(" "), formatTimestamp(key.created_at), formatTimestamp(key.last_used_at), formatTimestamp(key.expires_at)],
    });
  },
};

export const keysCreateCommand: Command = {
  path: ["keys", "create"],
  summary: "mint an API key bound to the namespace; its token is shown once",
  synopsis: "--name <display name> --scope <scope>… [--expires-at <RFC 3339>]",
  arguments: [],
  options: [
    { name: "name", value: "<display name>", description: "what the key is for, shown in listings" },
    { name: "scope", value: "<scope>", repeatable: true, description: "a scope the key carries (repeat, or separate with spaces); at most those you hold" },
    { name: "expires-at", value: "<RFC 3339>", description: "when the key stops working, e.g. 2027-01-01T00:00:00Z (default: never)" },
  ],
  notes: [
    "The token is printed once and cannot be shown again: store it now.",
    "A key made while signed in with `switchyard login` belongs to the account: it expires when --expires-at says (else never) and keeps working after logout. One made with SWITCHYARD_API_KEY expires no later than that key.",
  ],
  async run(context) {
    const name = optionValue(context.args, "name");
    if (name === undefined || name.trim() === "") throw new UsageError("--name is required", context.usage);
    const scopes = [...new Set((context.args.values.get("scope") ?? []).flatMap((value) => value.split(/[\s,]+/)).filter(Boolean))];
    if (scopes.length === 0) throw new UsageError("at least one --scope is required", context.usage);
    const unknown = scopes.find((scope) => !isValidScope(scope));
    if (unknown !== undefined) throw new UsageError(`unknown scope: ${unknown}`, context.usage);
    const expiresAt = optionValue(context.args, "expires-at");
    const session = Session.open(context.env);
    const body = await session.call("POST", session.namespacePath("/keys"), {
      display_name: name,
      scopes,
      ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
    });
    if (context.json) return printJson(context, body);
    const created = body as ApiKeyEnvelope & { token: string };
    const shortened = earlierThanAsked(created.expires_at, expiresAt);
    // On stderr, so stdout stays the key alone; a key made by another key (SWITCHYARD_API_KEY)
    // or a third-party app's token is bounded by it, and that should not come as a surprise.
    if (shortened) context.io.stderr(`Note: this key expires ${formatTimestamp(created.expires_at)}, earlier than asked: it cannot outlive the credential that created it.\n`);
    print(
      context,
      [
        formatFields([
          ["id", created.id],
          ["name", created.display_name],
          ["scopes", created.scopes.join(" ")],
          ["expires", formatTimestamp(created.expires_at) === "-" ? "never" : formatTimestamp(created.expires_at)],
        ]),
        "",
        "Token (shown once; store it now):",
        created.token,
      ].join("\n"),
    );
  },
};

export const keysRevokeCommand: Command = {
  path: ["keys", "revoke"],
  summary: "revoke an API key by its id (k_…); it stops working at once",
  synopsis: "<id>",
  arguments: [{ name: "<id>", required: true }],
  options: [],
  async run(context) {
    const id = context.args.positionals[0]!;
    const session = Session.open(context.env);
    const body = await session.call("DELETE", session.namespacePath(`/keys/${encodeURIComponent(id)}`));
    if (context.json) return printJson(context, body);
    print(context, `Revoked key ${id}.`);
  },
};
