import { UsageError } from "../cli-error";
import type { Command } from "../command";
import { describePolicySpec } from "../describe-policy";
import { formatTable, formatTimestamp } from "../format-table";
import { listData, print, printJson } from "../output";
import { optionValue } from "../parse-args";
import { Session } from "../session";

interface PolicyEnvelope {
  id: string;
  name: string;
  kind: string;
  spec: unknown;
  disabled_at: string | null;
}

const KINDS = ["budget", "rate_limit", "guardrail", "preset"];

export const policiesListCommand: Command = {
  path: ["policies", "list"],
  summary: "list the namespace's policies (budgets, rate limits, guardrails, presets)",
  synopsis: "[--kind budget|rate_limit|guardrail|preset]",
  arguments: [],
  options: [{ name: "kind", value: "<kind>", description: `only policies of this kind: ${KINDS.join(", ")}` }],
  async run(context) {
    const kind = optionValue(context.args, "kind");
    if (kind !== undefined && !KINDS.includes(kind)) throw new UsageError(`--kind must be one of ${KINDS.join(", ")}`, context.usage);
    const session = Session.open(context.env);
    const body = await session.call("GET", session.namespacePath(kind === undefined ? "/policies" : `/policies?kind=${kind}`));
    if (context.json) return printJson(context, body);
    const policies = listData<PolicyEnvelope>(body);
    if (policies.length === 0) return print(context, "No policies.");
    print(
      context,
      formatTable(
        ["id", "name", "kind", "state", "rule"],
        policies.map((policy) => [policy.id, policy.name, policy.kind, policy.disabled_at ? `disabled ${formatTimestamp(policy.disabled_at)}` : "enabled", describePolicySpec(policy.kind, policy.spec)]),
      ),
    );
  },
};
