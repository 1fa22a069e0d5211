import { CliError } from "../cli-error";
import type { Command, CommandContext } from "../command";
import { configDirectory, CredentialStore } from "../credential-store";
import { errorDescription, sendRequest, withQuery } from "../http-client";
import { printListing } from "../output";
import { optionValue } from "../parse-args";
import { configuredServerUrl, DEFAULT_SERVER_URL } from "../server-url";

interface ModelEntry {
  id: string;
  max_input_tokens?: number;
  capabilities: string[];
  pricing: { input_tokens: { no_cache?: number }; output_tokens: { text?: number } };
  metrics?: { request_count: number; success_rate: number; p50_latency_ms: number | null; p50_ttft_ms: number | null };
}

/** USD per million tokens as the catalog states it; "-" when unpriced. */
const perMillion = (value: number | undefined) => (value === undefined ? "-" : `$${value}`);

/**
 * The catalog is public: no sign-in needed. It is read from SWITCHYARD_URL, else the
 * server of the stored sign-in, else the default.
 */
function catalogServer(context: CommandContext): string {
  return configuredServerUrl(context.env) ?? new CredentialStore(configDirectory(context.env)).read()?.server ?? DEFAULT_SERVER_URL;
}

export const modelsCommand: Command = {
  path: ["models"],
  summary: "the model catalog: prices, context, capabilities, live latency and success rate",
  synopsis: "[--provider <id>] [--search <text>]",
  arguments: [],
  options: [
    { name: "provider", value: "<id>", description: "only models this provider serves" },
    { name: "search", value: "<text>", description: "only models whose id contains this text" },
  ],
  notes: ["Prices are USD per million tokens (the cheapest endpoint); latency and success are over the server's metrics window, for models that served requests in it."],
  async run(context) {
    const path = withQuery("/v1/models", { provider: optionValue(context.args, "provider"), id: optionValue(context.args, "search") });
    const response = await sendRequest(catalogServer(context), { method: "GET", path });
    if (response.status !== 200 || response.body === undefined) throw new CliError(errorDescription(response), undefined, response.status);
    printListing<ModelEntry>(context, response.body, {
      empty: "No models.",
      headers: ["model", "context", "input", "output", "capabilities", "p50 latency", "p50 ttft", "success"],
      row: (model) => [
        model.id,
        model.max_input_tokens?.toLocaleString("en-US") ?? "-",
        perMillion(model.pricing.input_tokens.no_cache),
        perMillion(model.pricing.output_tokens.text),
        model.capabilities.join(" ") || "-",
        model.metrics?.p50_latency_ms == null ? "-" : `${model.metrics.p50_latency_ms} ms`,
        model.metrics?.p50_ttft_ms == null ? "-" : `${model.metrics.p50_ttft_ms} ms`,
        model.metrics ? `${(model.metrics.success_rate * 100).toFixed(1)}%` : "-",
      ],
      rightAligned: new Set([1, 2, 3, 5, 6, 7]),
    });
  },
};
