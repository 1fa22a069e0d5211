import type { IrUsage } from "../../../src/ir";

const FIELDS = ["promptTokens", "completionTokens", "reasoningTokens", "cacheReadTokens", "cacheWriteTokens", "webSearchCount"] as const;

/**
 * Merges successive usage frames of one attempt, as a reader of the signals would: a later report wins field by
 * field (Anthropic reports input at message_start and output at message_delta;
 * OpenAI reports everything once at the end). Unreported fields stay undefined.
 */
export function mergeUsage(previous: IrUsage | undefined, next: IrUsage): IrUsage {
  if (!previous) return { ...next };
  const merged: IrUsage = { ...previous };
  for (const field of FIELDS) if (next[field] !== undefined) merged[field] = next[field];
  if (next.raw !== undefined) merged.raw = next.raw;
  return merged;
}
