import type { IrUsage } from "../../ir";
import { makeCountsInclusive } from "../openai-shared/make-counts-inclusive";
import { isRecord } from "../openai-shared/read-fields";

/**
 * Responses usage <-> IrUsage (prompt includes cache reads;
 * platform.openai.com/docs/api-reference/responses/object#usage). Every vendor seen so far
 * (OpenAI, Azure, xAI) counts reasoning and cached tokens inside; `total_tokens` is still
 * checked (make-counts-inclusive.ts), as the chat decoder does, should one count them outside.
 *
 * | IrUsage          | Responses usage field                         |
 * |------------------|-----------------------------------------------|
 * | promptTokens     | `input_tokens` (inclusive of cached tokens)   |
 * | completionTokens | `output_tokens` (inclusive of reasoning)      |
 * | reasoningTokens  | `output_tokens_details.reasoning_tokens`      |
 * | cacheReadTokens  | `input_tokens_details.cached_tokens`          |
 * | cacheWriteTokens | `input_tokens_details.cache_write_tokens`     |
 */
export function decodeResponsesUsage(value: unknown): IrUsage | undefined {
  if (!isRecord(value)) return undefined;
  const inputDetails = isRecord(value.input_tokens_details) ? value.input_tokens_details : {};
  const outputDetails = isRecord(value.output_tokens_details) ? value.output_tokens_details : {};
  const usage: IrUsage = { raw: value };
  const counts: Array<[keyof IrUsage, unknown]> = [
    ["promptTokens", value.input_tokens],
    ["completionTokens", value.output_tokens],
    ["reasoningTokens", outputDetails.reasoning_tokens],
    ["cacheReadTokens", inputDetails.cached_tokens],
    ["cacheWriteTokens", inputDetails.cache_write_tokens],
  ];
  for (const [field, count] of counts) {
    if (field !== "raw" && typeof count === "number" && Number.isInteger(count) && count >= 0) usage[field] = count;
  }
  return makeCountsInclusive(usage, value.total_tokens);
}

export function encodeResponsesUsage(usage: IrUsage): Record<string, unknown> {
  const input = usage.promptTokens ?? 0;
  const output = usage.completionTokens ?? 0;
  const wire: Record<string, unknown> = { input_tokens: input };
  const inputDetails: Record<string, number> = {};
  if (usage.cacheReadTokens !== undefined) inputDetails.cached_tokens = usage.cacheReadTokens;
  if (usage.cacheWriteTokens !== undefined) inputDetails.cache_write_tokens = usage.cacheWriteTokens;
  if (Object.keys(inputDetails).length > 0) wire.input_tokens_details = inputDetails;
  wire.output_tokens = output;
  wire.output_tokens_details = { reasoning_tokens: usage.reasoningTokens ?? 0 };
  wire.total_tokens = input + output;
  return wire;
}
