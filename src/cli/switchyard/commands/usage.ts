import { UsageError } from "../cli-error";
import type { Command, CommandContext } from "../command";
import { formatFields, formatMicroUsd, formatTimestamp } from "../format-table";
import { withQuery } from "../http-client";
import { print, printJson } from "../output";
import { optionValue } from "../parse-args";
import { Session } from "../session";

interface NamespaceUsage {
  from: string;
  to: string;
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_micro_usd: number;
  capability_request_counts?: Record<string, number>;
  billing_anomalies?: number;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 date-time as given, or a plain date as its midnight UTC. */
function windowEdge(context: CommandContext, name: "from" | "to"): string | undefined {
  const value = optionValue(context.args, name);
  if (value === undefined) return undefined;
  if (DATE_ONLY.test(value)) return `${value}T00:00:00Z`;
  if (DATE_TIME.test(value)) return value;
  throw new UsageError(`--${name} must be a date (2026-11-01) or an RFC 3339 date-time (2026-11-01T12:00:00Z)`, context.usage);
}

const count = (value: number | undefined) => (value === undefined ? undefined : value.toLocaleString("en-US"));

export const usageCommand: Command = {
  path: ["usage"],
  summary: "requests, tokens and spend of the namespace over a window",
  synopsis: "[--from <date>] [--to <date>]",
  arguments: [],
  options: [
    { name: "from", value: "<date>", description: "start, inclusive: 2026-11-01 (midnight UTC) or RFC 3339 (default: 30 days before --to)" },
    { name: "to", value: "<date>", description: "end, exclusive (default: now)" },
  ],
  async run(context) {
    const window = { from: windowEdge(context, "from"), to: windowEdge(context, "to") };
    const session = Session.open(context.env);
    const body = await session.call("GET", session.namespacePath(withQuery("/usage", window)));
    if (context.json) return printJson(context, body);
    const usage = body as NamespaceUsage;
    const capabilities = Object.entries(usage.capability_request_counts ?? {})
      .map(([capability, requests]) => `${capability} ${requests}`)
      .join(", ");
    print(
      context,
      formatFields([
        ["window", `${formatTimestamp(usage.from)} → ${formatTimestamp(usage.to)}`],
        ["requests", count(usage.request_count)],
        ["prompt tokens", count(usage.prompt_tokens)],
        ["completion tokens", count(usage.completion_tokens)],
        ["spend", `${formatMicroUsd(usage.spend_micro_usd)} (${count(usage.spend_micro_usd)} micro-USD)`],
        ...(usage.billing_anomalies ? ([["charge unknown", `${usage.billing_anomalies} request(s)`]] as [string, string][]) : []),
        ...(capabilities ? ([["capabilities", capabilities]] as [string, string][]) : []),
      ]),
    );
  },
};
