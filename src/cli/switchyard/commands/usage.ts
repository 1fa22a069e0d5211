import type { DailyUsageEnvelope, NamespaceUsageEnvelope } from "../../../management/usage/usage-service";
import { UsageError } from "../cli-error";
import type { Command, CommandContext } from "../command";
import { dateOption } from "../date-option";
import { formatFields, formatMicroUsd, formatTable, formatTimestamp } from "../format-table";
import { withQuery } from "../http-client";
import { print, printJson } from "../output";
import { optionValue } from "../parse-args";
import { Session } from "../session";

/** `--by` words and the `group_by` each asks for. */
const GROUPINGS: Record<string, string> = { model: "model", key: "api_key", provider: "provider" };

const count = (value: number | undefined) => (value === undefined ? undefined : value.toLocaleString("en-US"));

export const usageCommand: Command = {
  path: ["usage"],
  summary: "requests, tokens and spend of the namespace over a window, in total or per day",
  synopsis: "[--from <date>] [--to <date>] [--daily [--by model|key|provider]]",
  arguments: [],
  options: [
    { name: "from", value: "<date>", description: "start, inclusive: 2026-11-01 (midnight UTC) or RFC 3339 (default: 30 days before --to)" },
    { name: "to", value: "<date>", description: "end, exclusive (default: now)" },
    { name: "daily", description: "one row per UTC day with requests (at most 400 days)" },
    { name: "by", value: "<model|key|provider>", description: "with --daily: a row per day and model, API key or provider" },
  ],
  async run(context) {
    const window = { from: dateOption(context, "from"), to: dateOption(context, "to") };
    const by = optionValue(context.args, "by");
    const daily = context.args.switches.has("daily");
    if (by !== undefined && !daily) throw new UsageError("--by needs --daily", context.usage);
    if (by !== undefined && GROUPINGS[by] === undefined) throw new UsageError("--by must be one of model, key, provider", context.usage);
    const session = Session.open(context.env);
    if (daily) return printDaily(context, await session.call("GET", session.namespacePath(withQuery("/usage/daily", { ...window, group_by: by && GROUPINGS[by] }))), by);
    const body = await session.call("GET", session.namespacePath(withQuery("/usage", window)));
    if (context.json) return printJson(context, body);
    const usage = body as NamespaceUsageEnvelope;
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

/** GET …/usage/daily as a table: a row per day (and group), the window above it. */
function printDaily(context: CommandContext, body: unknown, by: string | undefined): void {
  if (context.json) return printJson(context, body);
  const usage = body as DailyUsageEnvelope;
  const window = `${formatTimestamp(usage.from)} → ${formatTimestamp(usage.to)}`;
  if (usage.data.length === 0) return print(context, `No requests from ${window}.`);
  const headers = ["date", ...(by ? [by] : []), "requests", "in", "out", "spend"];
  const rows = usage.data.map((day) => [day.date, ...(by ? [day.group ?? "-"] : []), count(day.request_count), count(day.prompt_tokens), count(day.completion_tokens), formatMicroUsd(day.spend_micro_usd)]);
  const first = by ? 2 : 1;
  print(context, `${window}\n${formatTable(headers, rows, new Set([first, first + 1, first + 2, first + 3]))}`);
}
