/**
 * OpenAI chat `usage` and `finish_reason`.
 * https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage
 */
import type { JsonObject } from "./mock-protocol";
import type { MockFinish, ResolvedUsage } from "./resolve-scenario";

/**
 * `prompt_tokens` INCLUDES cached tokens and `completion_tokens` INCLUDES reasoning tokens;
 * there is no cache-write counter on this wire.
 */
export function openaiChatUsage(usage: ResolvedUsage): JsonObject {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export const OPENAI_FINISH_REASONS: Readonly<Record<MockFinish, string>> = {
  stop: "stop",
  tool_calls: "tool_calls",
  length: "length",
};
