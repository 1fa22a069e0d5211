import type { BudgetStatus, PolicyStatus, RateLimitStatus } from "../../../management/policies/policy-status";
import type { Command } from "../command";
import { formatMicroUsd, formatTable } from "../format-table";
import { print, printJson } from "../output";
import { Session } from "../session";

const used = (value: number | null, max: number | null) => (max === null ? "-" : `${value ?? 0} / ${max}`);

function budgetLines(status: BudgetStatus): string {
  const head = `budget (${status.window}): ${formatMicroUsd(status.remaining_micro_usd)} of ${formatMicroUsd(status.limit_micro_usd)} left (${formatMicroUsd(status.spent_micro_usd)} spent, ${formatMicroUsd(status.reserved_micro_usd)} held in flight)`;
  if (status.principals.length <= 1) return head;
  const rows = status.principals.map((p) => [`${p.principal_type} ${p.principal_id}`, formatMicroUsd(p.spent_micro_usd), formatMicroUsd(p.reserved_micro_usd), formatMicroUsd(p.remaining_micro_usd)]);
  return `${head}\n${formatTable(["bound to", "spent", "held", "left"], rows, new Set([1, 2, 3]))}`;
}

function rateLimitLines(status: RateLimitStatus): string {
  const clause = status.clauses[0]!;
  const head = `rate limit (${clause.window_secs} s window): requests ${used(clause.used_requests, clause.max_requests)}, tokens ${used(clause.used_tokens, clause.max_tokens)}, room frees in ${clause.resets_in_secs} s`;
  if (status.principals.length <= 1) return head;
  const rows = status.principals.map((p) => {
    const own = p.clauses[0]!;
    return [`${p.principal_type} ${p.principal_id}`, used(own.used_requests, own.max_requests), used(own.used_tokens, own.max_tokens), `${own.resets_in_secs} s`];
  });
  return `${head}\n${formatTable(["bound to", "requests", "tokens", "frees in"], rows)}`;
}

export const policyStatusCommand: Command = {
  path: ["policies", "status"],
  summary: "how much of a budget or rate limit is used, as admission counts it",
  synopsis: "<policy id>",
  arguments: [{ name: "<policy id>", required: true }],
  options: [],
  notes: ["A policy bound to several principals has a counter for each: the first line is the one nearest its limit, a table lists each."],
  async run(context) {
    const id = context.args.positionals[0]!;
    const session = Session.open(context.env);
    const body = await session.call("GET", session.namespacePath(`/policies/${encodeURIComponent(id)}/status`));
    if (context.json) return printJson(context, body);
    const status = body as PolicyStatus;
    const parts: string[] = [];
    if (status.kind === "budget") parts.push(budgetLines(status as BudgetStatus));
    else if (status.kind === "rate_limit") parts.push(rateLimitLines(status as RateLimitStatus));
    else if (status.kind === "preset") {
      const preset = status as { budget?: BudgetStatus; rate_limit?: RateLimitStatus };
      if (preset.budget) parts.push(budgetLines(preset.budget));
      if (preset.rate_limit) parts.push(rateLimitLines(preset.rate_limit));
    }
    print(context, parts.length > 0 ? parts.join("\n") : `${status.kind}: nothing to count`);
  },
};
