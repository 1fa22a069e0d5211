/**
 * Anthropic Messages streaming, `event: <type>` + `data: <json>` frames.
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming
 *
 * message_start (usage: input and cache counters, output_tokens 1), then per block
 * content_block_start, content_block_delta*, content_block_stop, with a `ping` after the
 * first content_block_start as in the documented example; then message_delta
 * (stop_reason, cumulative output_tokens) and message_stop.
 * Deltas: text_delta; thinking_delta* then one signature_delta; input_json_delta starting
 * with an empty `partial_json` as the API does, then fragments cut mid-token.
 */
import { anthropicEchoedModel } from "./echoed-model";
import {
  ANTHROPIC_STOP_REASONS,
  anthropicBlocks,
  anthropicUsage,
  type AnthropicBlock,
} from "./anthropic-messages-content";
import { mockIds } from "./mock-ids";
import type { JsonObject, MockCall } from "./mock-protocol";
import type { ResolvedScenario } from "./resolve-scenario";
import { sseEvent } from "./sse-frames";
import { splitIntoFragments, splitIntoWords } from "./split-pieces";

function blockStart(block: AnthropicBlock): JsonObject {
  switch (block.type) {
    case "thinking":
      return { type: "thinking", thinking: "" };
    case "text":
      return { type: "text", text: "" };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: {} };
  }
}

function blockDeltas(block: AnthropicBlock): JsonObject[] {
  switch (block.type) {
    case "thinking":
      return [
        ...splitIntoWords(block.thinking).map((thinking) => ({ type: "thinking_delta", thinking })),
        { type: "signature_delta", signature: block.signature },
      ];
    case "text":
      return splitIntoWords(block.text).map((text) => ({ type: "text_delta", text }));
    case "tool_use":
      return ["", ...splitIntoFragments(block.inputJson)].map((partial_json) => ({
        type: "input_json_delta",
        partial_json,
      }));
  }
}

export function renderAnthropicMessagesStream(scenario: ResolvedScenario, call: MockCall): string[] {
  const frames: string[] = [];
  const emit = (type: string, fields: JsonObject) => frames.push(sseEvent(type, { type, ...fields }));

  emit("message_start", {
    message: {
      id: mockIds.anthropicMessage(),
      type: "message",
      role: "assistant",
      model: anthropicEchoedModel(call.model),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: anthropicUsage(scenario.usage, 1),
    },
  });
  const blocks = anthropicBlocks(scenario);
  if (blocks.length === 0) emit("ping", {});
  blocks.forEach((block, index) => {
    emit("content_block_start", { index, content_block: blockStart(block) });
    if (index === 0) emit("ping", {});
    for (const delta of blockDeltas(block)) emit("content_block_delta", { index, delta });
    emit("content_block_stop", { index });
  });
  emit("message_delta", {
    delta: { stop_reason: ANTHROPIC_STOP_REASONS[scenario.finish], stop_sequence: null },
    usage: { output_tokens: scenario.usage.completion },
  });
  emit("message_stop", {});
  return frames;
}
