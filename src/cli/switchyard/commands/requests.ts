import type { Command } from "../command";
import { formatMicroUsd, formatTimestamp } from "../format-table";
import { withQuery } from "../http-client";
import { printListing } from "../output";
import { integerOption } from "../parse-args";
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

export const requestsCommand: Command = {
  path: ["requests"],
  summary: "the namespace's latest requests, newest first (metadata only)",
  synopsis: "[--limit <n>] [--offset <n>]",
  arguments: [],
  options: [
    { name: "limit", value: "<n>", description: "how many, 1 to 100 (default 25)" },
    { name: "offset", value: "<n>", description: "skip this many of the newest (default 0)" },
  ],
  async run(context) {
    const page = {
      limit: integerOption(context.args, "limit", context.usage, 1, 100),
      offset: integerOption(context.args, "offset", context.usage, 0),
    };
    const session = Session.open(context.env);
    printListing<RequestRecord>(context, await session.call("GET", session.namespacePath(withQuery("/requests", page))), {
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
  },
};
