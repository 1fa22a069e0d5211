import type { IrUsage } from "../../ir";
import { makeCountsInclusive } from "../openai-shared/make-counts-inclusive";
import { isRecord } from "../openai-shared/read-fields";

/**
 * Chat usage <-> IrUsage (which wire field feeds which bucket):
 *
 * | IrUsage          | chat usage field                                                    |
 * |------------------|---------------------------------------------------------------------|
 * | promptTokens     | `prompt_tokens`, plus cached tokens where a vendor counts them outside |
 * | completionTokens | `completion_tokens`, plus reasoning where a vendor counts it outside (xAI) |
 * | reasoningTokens  | `completion_tokens_details.reasoning_tokens`                        |
 * | cacheReadTokens  | `prompt_tokens_details.cached_tokens`, else DeepSeek `prompt_cache_hit_tokens` |
 * | cacheWriteTokens | `prompt_tokens_details.cache_write_tokens` (when a provider reports it) |
 *
 * Sources: platform.openai.com/docs/api-reference/chat/object#usage and
 * api-docs.deepseek.com/api/create-chat-completion (prompt_cache_hit_tokens). Whether a
 * vendor counts reasoning and cached tokens inside or outside is read from `total_tokens`
 * (make-counts-inclusive.ts). A missing field stays undefined: unknown is not zero.
 */
export function decodeChatUsage(value: unknown): IrUsage | undefined {
  if (!isRecord(value)) return undefined;
  const promptDetails = isRecord(value.prompt_tokens_details) ? value.prompt_tokens_details : {};
  const completionDetails = isRecord(value.completion_tokens_details) ? value.completion_tokens_details : {};
  const usage: IrUsage = { raw: value };
  setCount(usage, "promptTokens", value.prompt_tokens);
  setCount(usage, "completionTokens", value.completion_tokens);
  setCount(usage, "reasoningTokens", completionDetails.reasoning_tokens);
  setCount(usage, "cacheReadTokens", promptDetails.cached_tokens ?? value.prompt_cache_hit_tokens);
  setCount(usage, "cacheWriteTokens", promptDetails.cache_write_tokens);
  return makeCountsInclusive(usage, value.total_tokens);
}

type CountField = "promptTokens" | "completionTokens" | "reasoningTokens" | "cacheReadTokens" | "cacheWriteTokens";

function setCount(usage: IrUsage, field: CountField, value: unknown): void {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) usage[field] = value;
}

/** IrUsage -> chat usage; details only when the IR knows them. */
export function encodeChatUsage(usage: IrUsage): Record<string, unknown> {
  const prompt = usage.promptTokens ?? 0;
  const completion = usage.completionTokens ?? 0;
  const wire: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  const promptDetails: Record<string, number> = {};
  if (usage.cacheReadTokens !== undefined) promptDetails.cached_tokens = usage.cacheReadTokens;
  if (usage.cacheWriteTokens !== undefined) promptDetails.cache_write_tokens = usage.cacheWriteTokens;
  if (Object.keys(promptDetails).length > 0) wire.prompt_tokens_details = promptDetails;
  if (usage.reasoningTokens !== undefined) wire.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return wire;
}
