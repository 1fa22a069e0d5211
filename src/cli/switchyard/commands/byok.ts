import { sealedBoxSeal } from "../../../byok/sealed-box";
import { CliError, UsageError } from "../cli-error";
import type { Command, CommandContext } from "../command";
import { formatTimestamp } from "../format-table";
import { print, printJson, printListing } from "../output";
import { optionValue } from "../parse-args";
import { Session } from "../session";

interface ByokKeyEnvelope {
  provider_name: string;
  /** The namespace the key belongs to; null: the whole account's. */
  namespace_id: string | null;
  kek_id: string;
  key_prefix: string;
  api_base: string | null;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  last_failure_at: string | null;
  last_failure_kind: string | null;
}

/**
 * The few leading characters listings show to tell keys apart ("sk-pr"): at most six,
 * and never more than a quarter of the key, so a short key is not half disclosed.
 */
export function byokKeyPrefix(key: string): string {
  return key.slice(0, Math.min(6, Math.floor(key.length / 4)));
}

/** The key from standard input: piped, or typed at a terminal without echo. Never from argv. */
async function readProviderKey(context: CommandContext, provider: string): Promise<string> {
  const raw = context.io.stdinIsTerminal ? await context.io.readHiddenLine(`Paste the ${provider} API key (input hidden), then press Enter: `) : await context.io.readStdin();
  const key = raw.trim();
  if (key === "") throw new UsageError("no key on standard input: pipe it in, e.g. `switchyard byok set openai < key.txt`", context.usage);
  if (/\s/.test(key)) throw new UsageError("the key on standard input contains whitespace; give exactly one key", context.usage);
  return key;
}

function decodePublicKey(body: unknown): { kekId: string; publicKey: Uint8Array } {
  const { kek_id, public_key } = (body ?? {}) as { kek_id?: unknown; public_key?: unknown };
  const publicKey = typeof public_key === "string" ? new Uint8Array(Buffer.from(public_key, "base64")) : new Uint8Array();
  if (typeof kek_id !== "string" || publicKey.length !== 32) throw new CliError("the server's BYOK encryption key is malformed (GET /v1/byok/encryption-pubkey)");
  return { kekId: kek_id, publicKey };
}

export const byokSetCommand: Command = {
  path: ["byok", "set"],
  summary: "store your own key for a provider, sealed on this machine before upload",
  synopsis: "<provider> [--api-base <url>]  < key-file",
  arguments: [{ name: "<provider>", required: true }],
  options: [{ name: "api-base", value: "<url>", description: "send this provider's requests to this base URL instead of its default" }],
  notes: [
    "The key is read from standard input (piped, or typed without echo), never from the",
    "command line. It is sealed to the server's public key here; only the server can open it.",
  ],
  async run(context) {
    const provider = context.args.positionals[0]!;
    const apiBase = optionValue(context.args, "api-base");
    const session = Session.open(context.env);
    const key = await readProviderKey(context, provider);
    const { kekId, publicKey } = decodePublicKey(await session.call("GET", "/v1/byok/encryption-pubkey"));
    const plaintext = new TextEncoder().encode(key);
    const sealed = sealedBoxSeal(plaintext, publicKey);
    plaintext.fill(0);
    const body = await session.call("POST", "/v1/byok/keys", {
      provider_name: provider,
      ciphertext_b64: Buffer.from(sealed).toString("base64"),
      kek_id: kekId,
      key_prefix: byokKeyPrefix(key),
      ...(apiBase === undefined ? {} : { api_base: apiBase }),
    });
    if (context.json) return printJson(context, body);
    const stored = body as { provider_name: string; key_prefix: string };
    print(context, `Stored the ${stored.provider_name} key (${stored.key_prefix}…), sealed to ${kekId}.`);
  },
};

export const byokListCommand: Command = {
  path: ["byok", "list"],
  summary: "list the provider keys your requests can use: your namespace's and the account's (never the keys themselves)",
  synopsis: "",
  arguments: [],
  options: [],
  async run(context) {
    const session = Session.open(context.env);
    printListing<ByokKeyEnvelope>(context, await session.call("GET", "/v1/byok/keys"), {
      empty: "No provider keys.",
      headers: ["provider", "namespace", "prefix", "api base", "updated", "last used", "last failure"],
      row: (key) => [
        key.provider_name,
        key.namespace_id ?? "(account)",
        `${key.key_prefix}…`,
        key.api_base,
        formatTimestamp(key.updated_at),
        formatTimestamp(key.last_used_at),
        key.last_failure_at ? `${formatTimestamp(key.last_failure_at)} ${key.last_failure_kind ?? ""}`.trim() : null,
      ],
    });
  },
};

export const byokDeleteCommand: Command = {
  path: ["byok", "delete"],
  summary: "delete your key for a provider (a namespace-bound sign-in: its namespace's)",
  synopsis: "<provider>",
  arguments: [{ name: "<provider>", required: true }],
  options: [],
  async run(context) {
    const provider = context.args.positionals[0]!;
    const session = Session.open(context.env);
    const body = await session.call("DELETE", `/v1/byok/keys/${encodeURIComponent(provider)}`);
    if (context.json) return printJson(context, body);
    print(context, `Deleted the ${provider} key.`);
  },
};
