/**
 * Anthropic Messages content blocks, usage and stop reasons, shared by the body and the
 * stream. https://docs.anthropic.com/en/api/messages
 */
import { mockIds } from "./mock-ids";
import type { JsonObject } from "./mock-protocol";
import type { MockFinish, ResolvedScenario, ResolvedUsage } from "./resolve-scenario";

export type AnthropicBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown>; inputJson: string };

/** Blocks in order: thinking, text, tool_use. Empty text blocks are never sent (the API rejects them). */
export function anthropicBlocks(scenario: ResolvedScenario): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  if (scenario.reasoningText !== "") {
    blocks.push({ type: "thinking", thinking: scenario.reasoningText, signature: mockIds.anthropicSignature() });
  }
  if (scenario.text !== "") blocks.push({ type: "text", text: scenario.text });
  for (const toolCall of scenario.toolCalls) {
    blocks.push({
      type: "tool_use",
      id: mockIds.anthropicToolUse(),
      name: toolCall.name,
      input: toolCall.args,
      inputJson: toolCall.argsJson,
    });
  }
  return blocks;
}

export function anthropicBlockBody(block: AnthropicBlock): JsonObject {
  switch (block.type) {
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: block.signature };
    case "text":
      return { type: "text", text: block.text };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
  }
}

/**
 * `input_tokens` EXCLUDES cache reads and writes (they have their own counters);
 * `output_tokens` includes thinking.
 */
export function anthropicUsage(usage: ResolvedUsage, outputTokens = usage.completion): JsonObject {
  return {
    input_tokens: Math.max(0, usage.prompt - usage.cacheRead - usage.cacheWrite),
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: usage.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: "standard",
  };
}

export const ANTHROPIC_STOP_REASONS: Readonly<Record<MockFinish, string>> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
};
