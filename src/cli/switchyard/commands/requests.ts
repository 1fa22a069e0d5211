import { UsageError } from "../cli-error";
import type { Command } from "../command";
import { dateOption } from "../date-option";
import { formatMicroUsd, formatTimestamp } from "../format-table";
import { withQuery } from "../http-client";
import { printListing } from "../output";
import { integerOption, optionValue, type ParsedArgs } from "../parse-args";
import { Session } from "../session";

interface RequestRecord {
  request_id: string;
  created_at: string;
  model_id: string | null;
  provider_id: string | null;
  status: string;
  status_code?: number;
  prompt_tokens: number;
  completion_tokens: number;
  final_charge_micro_usd: number | null;
  funding_source: string | null;
  streamed?: boolean | null;
}

/** The server's bound on --offset (MAX_HISTORY_OFFSET): past it, pages go by --after. */
const MAX_OFFSET = 10_000;

export const requestsCommand: Command = {
  path: ["requests"],
  summary: "the namespace's latest requests, newest first (metadata only), filtered",
  synopsis: "[--limit <n>] [--after <record id>] [--offset <n>] [--status <status>] [--model <id>] [--key <key id>] [--streamed true|false] [--from <date>] [--to <date>]",
  arguments: [],
  options: [
    { name: "limit", value: "<n>", description: "how many, 1 to 100 (default 25)" },
    { name: "after", value: "<record id>", description: "the page after this record: the next page, as the previous one says on its last line" },
    { name: "offset", value: "<n>", description: `skip this many (default 0; at most ${MAX_OFFSET}: further pages with --after)` },
    { name: "status", value: "<status>", description: "only requests with this status: succeeded, failed, cancelled" },
    { name: "model", value: "<id>", description: "only requests for this model id (provider/model)" },
    { name: "key", value: "<key id>", description: "only requests made with this API key (its id, k_…, as `keys list` shows)" },
    { name: "streamed", value: "<true|false>", description: "only streamed (true) or only unstreamed (false) requests" },
    { name: "from", value: "<date>", description: "created at or after: 2026-11-01 (midnight UTC) or RFC 3339" },
    { name: "to", value: "<date>", description: "created before (exclusive)" },
  ],
  notes: [
    "Filters combine: `switchyard requests --key k_… --status failed` is that key's failed requests.",
    "When more requests follow, the last line (on stderr) is the command for the next page: the same options with --after.",
  ],
  async run(context) {
    const streamed = optionValue(context.args, "streamed");
    if (streamed !== undefined && streamed !== "true" && streamed !== "false") throw new UsageError("--streamed must be true or false", context.usage);
    const query = {
      limit: integerOption(context.args, "limit", context.usage, 1, 100),
      after: optionValue(context.args, "after"),
      offset: integerOption(context.args, "offset", context.usage, 0, MAX_OFFSET),
      status: optionValue(context.args, "status"),
      model_id: optionValue(context.args, "model"),
      api_key_id: optionValue(context.args, "key"),
      streamed,
      from: dateOption(context, "from"),
      to: dateOption(context, "to"),
    };
    const session = Session.open(context.env);
    const listing = await session.call("GET", session.namespacePath(withQuery("/requests", query)));
    printListing<RequestRecord>(context, listing, {
      empty: "No requests.",
      headers: ["created", "request id", "model", "provider", "status", "in", "out", "charge", "funding"],
      row: (record) => [
        formatTimestamp(record.created_at),
        record.request_id,
        record.model_id,
        record.provider_id,
        record.status_code === undefined ? record.status : `${record.status} ${record.status_code}`,
        record.prompt_tokens,
        record.completion_tokens,
        formatMicroUsd(record.final_charge_micro_usd),
        record.funding_source,
      ],
      rightAligned: new Set([5, 6, 7]),
    });
    // On stderr, so that stdout stays the table alone for whatever reads it; --json has next_after in the body.
    const nextAfter = (listing as { next_after?: unknown }).next_after;
    if (!context.json && typeof nextAfter === "string") context.io.stderr(`More: ${nextPageCommand(context.args, nextAfter)}\n`);
  },
};

/** The options that narrow or size the listing, carried to the next page's command. */
const CARRIED = ["limit", "status", "model", "key", "streamed", "from", "to"];

/** `switchyard requests` with this page's filters and limit, after its last record (the offset is spent: the position replaces it). */
function nextPageCommand(args: ParsedArgs, after: string): string {
  const words = ["switchyard", "requests"];
  for (const name of CARRIED) {
    const value = optionValue(args, name);
    if (value !== undefined) words.push(`--${name}`, shellWord(value));
  }
  words.push("--after", shellWord(after));
  return words.join(" ");
}

/** A value as one shell word: as it is when it is plain, else single-quoted. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
