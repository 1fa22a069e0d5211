import { UsageError } from "../cli-error";
import type { Command } from "../command";
import { describePolicySpec } from "../describe-policy";
import { formatEnabledState } from "../format-table";
import { withQuery } from "../http-client";
import { printListing } from "../output";
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
    printListing<PolicyEnvelope>(context, await session.call("GET", session.namespacePath(withQuery("/policies", { kind }))), {
      empty: "No policies.",
      headers: ["id", "name", "kind", "state", "rule"],
      row: (policy) => [policy.id, policy.name, policy.kind, formatEnabledState(policy.disabled_at), describePolicySpec(policy.kind, policy.spec)],
    });
  },
};
