/**
 * Gemini `Part`s, `usageMetadata` and `finishReason`, shared by the body and the stream.
 * https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse
 */
import type { JsonObject } from "./mock-protocol";
import type { MockFinish, ResolvedScenario } from "./resolve-scenario";

export function thoughtPart(text: string): JsonObject {
  return { text, thought: true };
}

export function textPart(text: string): JsonObject {
  return { text };
}

/** Gemini function calls have no id and arrive whole: `{functionCall: {name, args}}`. */
export function functionCallParts(scenario: ResolvedScenario): JsonObject[] {
  return scenario.toolCalls.map((toolCall) => ({ functionCall: { name: toolCall.name, args: toolCall.args } }));
}

/**
 * `promptTokenCount` INCLUDES `cachedContentTokenCount`; `candidatesTokenCount` EXCLUDES
 * `thoughtsTokenCount`; `totalTokenCount` is the sum of prompt, candidates and thoughts.
 * Optional counters are absent (not 0) when there is nothing to count, as Gemini does.
 */
export function googleUsageMetadata(prompt: number, completion: number, reasoning: number, cacheRead: number): JsonObject {
  const thoughts = Math.min(reasoning, completion);
  const usage: JsonObject = {
    promptTokenCount: prompt,
    candidatesTokenCount: completion - thoughts,
    totalTokenCount: prompt + completion,
  };
  if (cacheRead > 0) usage.cachedContentTokenCount = cacheRead;
  usage.promptTokensDetails = [{ modality: "TEXT", tokenCount: prompt }];
  if (thoughts > 0) usage.thoughtsTokenCount = thoughts;
  return usage;
}

/** Gemini has no tool-call finish reason: a function call turn ends with "STOP". */
export const GOOGLE_FINISH_REASONS: Readonly<Record<MockFinish, string>> = {
  stop: "STOP",
  tool_calls: "STOP",
  length: "MAX_TOKENS",
};
