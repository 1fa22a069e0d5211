import type { Command } from "../command";
import { describeBudget, describeGuardrail, describeRateLimit, type BudgetSpec, type GuardrailSpec, type RateLimitSpec } from "../describe-policy";
import { formatEnabledState } from "../format-table";
import { printListing } from "../output";
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
    printListing<PresetEnvelope>(context, await session.call("GET", session.namespacePath("/presets")), {
      empty: "No presets.",
      headers: ["id", "name", "state", "budget", "rate limit", "guardrail"],
      row: (preset) => [
        preset.id,
        preset.name,
        formatEnabledState(preset.disabled_at),
        preset.budget ? describeBudget(preset.budget) : null,
        preset.rate_limit ? describeRateLimit(preset.rate_limit) : null,
        preset.guardrail ? describeGuardrail(preset.guardrail) : null,
      ],
    });
  },
};
