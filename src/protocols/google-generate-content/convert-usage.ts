import type { IrUsage } from "../../ir";
import type { JsonObject } from "../shared/json-fields";
import type { GeminiUsageMetadata } from "./wire-types";

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/**
 * Gemini `usageMetadata` -> IR (fields from
 * https://ai.google.dev/api/generate-content#UsageMetadata). `promptTokenCount` already
 * includes cached content; `toolUsePromptTokenCount` (what a grounding or URL-context tool
 * added to the prompt) is outside it but billed as input, so the prompt is their sum.
 * `candidatesTokenCount` EXCLUDES thinking, so completion = candidates + thoughts. Gemini's
 * JSON leaves zero counts out: a missing candidates count is read from `totalTokenCount`
 * when that says what it is (an answer blocked for safety has 0 candidates), and stays
 * unreported otherwise. Gemini has no cache-write counter.
 */
export function convertGeminiUsage(usage: JsonObject): IrUsage {
  const result: IrUsage = { raw: usage };
  const reportedPrompt = count(usage.promptTokenCount);
  const toolUse = count(usage.toolUsePromptTokenCount);
  const prompt = reportedPrompt === undefined ? undefined : reportedPrompt + (toolUse ?? 0);
  if (prompt !== undefined) result.promptTokens = prompt;
  const thoughts = count(usage.thoughtsTokenCount);
  const total = count(usage.totalTokenCount);
  let candidates = count(usage.candidatesTokenCount);
  if (candidates === undefined && prompt !== undefined && total !== undefined && total - prompt - (thoughts ?? 0) >= 0) candidates = total - prompt - (thoughts ?? 0);
  if (candidates !== undefined || thoughts !== undefined) result.completionTokens = (candidates ?? 0) + (thoughts ?? 0);
  if (thoughts !== undefined) result.reasoningTokens = thoughts;
  const cached = count(usage.cachedContentTokenCount);
  if (cached !== undefined) result.cacheReadTokens = cached;
  return result;
}

/** IR -> `usageMetadata`: candidates exclude reasoning again. */
export function toGeminiUsage(usage: IrUsage | undefined): GeminiUsageMetadata {
  const prompt = usage?.promptTokens ?? 0;
  const completion = usage?.completionTokens ?? 0;
  const reasoning = usage?.reasoningTokens;
  const result: GeminiUsageMetadata = {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, completion - (reasoning ?? 0)),
    totalTokenCount: prompt + completion,
  };
  if (reasoning !== undefined) result.thoughtsTokenCount = reasoning;
  if (usage?.cacheReadTokens !== undefined) result.cachedContentTokenCount = usage.cacheReadTokens;
  return result;
}
