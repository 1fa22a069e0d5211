import type { IrUsage } from "../../ir";
import { isRecord, setOwn, type JsonObject } from "../shared/json-fields";
import type { AnthropicUsage } from "./wire-types";

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/**
 * Anthropic usage -> IR. Anthropic's `input_tokens` EXCLUDES cache reads
 * and cache writes (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
 * "total input tokens = input + cache_read + cache_creation"), while the IR prompt count
 * includes them. Reasoning tokens are only known when the API reports
 * `output_tokens_details.thinking_tokens`; otherwise they stay undefined (unknown ≠ 0).
 */
export function convertAnthropicUsage(usage: JsonObject): IrUsage {
  const input = count(usage.input_tokens);
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  const result: IrUsage = { raw: usage };
  if (input !== undefined) result.promptTokens = input + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const output = count(usage.output_tokens);
  if (output !== undefined) result.completionTokens = output;
  if (cacheRead !== undefined) result.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) result.cacheWriteTokens = cacheWrite;
  const details = usage.output_tokens_details;
  if (isRecord(details)) {
    const thinking = count(details.thinking_tokens);
    if (thinking !== undefined) result.reasoningTokens = thinking;
  }
  const serverTools = usage.server_tool_use;
  if (isRecord(serverTools)) {
    const searches = count(serverTools.web_search_requests);
    if (searches !== undefined) result.webSearchCount = searches;
  }
  return result;
}

/**
 * Streams report usage twice: `message_start.message.usage` (input side, output so far)
 * and `message_delta.usage` (cumulative; newer APIs repeat the input fields, older ones
 * send only `output_tokens`). Later non-null values win per field.
 */
export function mergeAnthropicUsage(previous: JsonObject | undefined, next: JsonObject): JsonObject {
  const merged: JsonObject = { ...previous };
  for (const [key, value] of Object.entries(next)) {
    // Defined, not assigned: a "__proto__" key would otherwise become a prototype whose counts are read as reported.
    if (value !== null && value !== undefined) setOwn(merged, key, value);
  }
  return merged;
}

/** IR -> Anthropic usage: input_tokens is rendered cache-exclusive again; searches are `server_tool_use.web_search_requests`. */
export function toAnthropicUsage(usage: IrUsage | undefined): AnthropicUsage {
  const prompt = usage?.promptTokens ?? 0;
  const cacheRead = usage?.cacheReadTokens;
  const cacheWrite = usage?.cacheWriteTokens;
  const result: AnthropicUsage = {
    input_tokens: Math.max(0, prompt - (cacheRead ?? 0) - (cacheWrite ?? 0)),
    output_tokens: usage?.completionTokens ?? 0,
  };
  if (cacheRead !== undefined) result.cache_read_input_tokens = cacheRead;
  if (cacheWrite !== undefined) result.cache_creation_input_tokens = cacheWrite;
  // Only a reported count: the web_fetch_requests beside it in Anthropic's usage is not known here.
  if (usage?.webSearchCount !== undefined) result.server_tool_use = { web_search_requests: usage.webSearchCount };
  return result;
}
