/**
 * The model names vendors echo back. OpenAI and Anthropic answer with a dated snapshot
 * slug, never the alias that was requested: the mocks do the same so that pricing by the
 * echoed name (a classic gateway bug) misses the price table in tests.
 */

const OPENAI_SNAPSHOTS: Readonly<Record<string, string>> = {
  "gpt-4o-mini": "gpt-4o-mini-2024-07-18",
  "gpt-4o": "gpt-4o-2024-08-06",
  "gpt-4.1": "gpt-4.1-2025-04-14",
  "gpt-4.1-mini": "gpt-4.1-mini-2025-04-14",
  "gpt-5-mini": "gpt-5-mini-2025-08-07",
  "o4-mini": "o4-mini-2025-04-16",
};

const ANTHROPIC_SNAPSHOTS: Readonly<Record<string, string>> = {
  "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
  "claude-haiku-4-5": "claude-haiku-4-5-20251001",
  "claude-opus-4-1": "claude-opus-4-1-20250805",
};

/** "gpt-4o-mini" → "gpt-4o-mini-2024-07-18"; unknown aliases get "-2024-07-18"; dated ids stay. */
export function openaiEchoedModel(model: string): string {
  if (/-\d{4}-\d{2}-\d{2}$/.test(model)) return model;
  return OPENAI_SNAPSHOTS[model] ?? `${model}-2024-07-18`;
}

/** "claude-sonnet-4-5" → "claude-sonnet-4-5-20250929"; unknown aliases get "-20250929". */
export function anthropicEchoedModel(model: string): string {
  if (/-\d{8}$/.test(model)) return model;
  return ANTHROPIC_SNAPSHOTS[model] ?? `${model}-20250929`;
}

/** Gemini's `modelVersion`: the stable version behind the alias, "-001" as Gemini 2.0 reports. */
export function googleModelVersion(model: string): string {
  return /-\d{3}$/.test(model) ? model : `${model}-001`;
}
