import type { Command } from "../command";
import { describeBudget, describeGuardrail, describeRateLimit, type BudgetSpec, type GuardrailSpec, type RateLimitSpec } from "../describe-policy";
import { formatTable, formatTimestamp } from "../format-table";
import { listData, print, printJson } from "../output";
import { Session } from "../session";

interface PresetEnvelope {
  id: string;
  name: string;
  guardrail: GuardrailSpec | null;
  budget: BudgetSpec | null;
  rate_limit: RateLimitSpec | null;
  disabled_at: string | null;
}

/** Policy presets (bundles of a guardrail, a budget and a rate limit); routing presets are a different resource. */
export const policyPresetsListCommand: Command = {
  path: ["presets", "list"],
  summary: "list the namespace's policy presets (guardrail + budget + rate limit bundles)",
  synopsis: "",
  arguments: [],
  options: [],
  notes: ["These are policy presets (…/presets), not routing presets (`@name` models)."],
  async run(context) {
    const session = Session.open(context.env);
    const body = await session.call("GET", session.namespacePath("/presets"));
    if (context.json) return printJson(context, body);
    const presets = listData<PresetEnvelope>(body);
    if (presets.length === 0) return print(context, "No presets.");
    print(
      context,
      formatTable(
        ["id", "name", "state", "budget", "rate limit", "guardrail"],
        presets.map((preset) => [
          preset.id,
          preset.name,
          preset.disabled_at ? `disabled ${formatTimestamp(preset.disabled_at)}` : "enabled",
          preset.budget ? describeBudget(preset.budget) : null,
          preset.rate_limit ? describeRateLimit(preset.rate_limit) : null,
          preset.guardrail ? describeGuardrail(preset.guardrail) : null,
        ]),
      ),
    );
  },
};
