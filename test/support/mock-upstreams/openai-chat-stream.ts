/**
 * OpenAI chat streaming: `data: <chat.completion.chunk>` frames, then `data: [DONE]`.
 * https://platform.openai.com/docs/api-reference/chat-streaming
 *
 * - The first delta carries `role: "assistant"` (with the first tool call when the turn
 *   is tool calls only, as OpenAI does).
 * - A tool call opens with `{index, id, type, function: {name, arguments: ""}}`; its
 *   argument fragments carry only `{index, function: {arguments}}`.
 * - Usage is only sent when the request set `stream_options.include_usage`: then every
 *   chunk has `usage: null` and a final chunk has `choices: []` and the usage (or, with
 *   `finalChunkHasChoicesAndUsage`, the finish chunk carries it, as some compatible
 *   providers do).
 */
import { openaiEchoedModel } from "./echoed-model";
import { mockIds } from "./mock-ids";
import { isJsonObject, unixSeconds, type JsonObject, type MockCall } from "./mock-protocol";
import { OPENAI_FINISH_REASONS, openaiChatUsage } from "./openai-chat-usage";
import type { ResolvedScenario } from "./resolve-scenario";
import { sseData } from "./sse-frames";
import { splitIntoFragments, splitIntoWords } from "./split-pieces";

export function includeUsageRequested(body: JsonObject): boolean {
  const options = body.stream_options;
  return isJsonObject(options) && options.include_usage === true;
}

export function renderOpenaiChatStream(scenario: ResolvedScenario, call: MockCall): string[] {
  const includeUsage = includeUsageRequested(call.body);
  const header = {
    id: mockIds.chatCompletion(),
    object: "chat.completion.chunk",
    created: unixSeconds(),
    model: openaiEchoedModel(call.model),
    service_tier: "default",
    system_fingerprint: mockIds.systemFingerprint(),
  };
  const chunk = (delta: JsonObject, finishReason: string | null = null): string =>
    sseData({
      ...header,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });

  const frames: string[] = [];
  const calls = scenario.toolCalls.map((toolCall) => ({ ...toolCall, id: mockIds.openaiToolCall() }));
  const opening = (index: number) => {
    const toolCall = calls[index];
    if (toolCall === undefined) throw new Error(`no tool call ${index}`);
    return { index, id: toolCall.id, type: "function", function: { name: toolCall.name, arguments: "" } };
  };
  const toolOnly = scenario.text === "" && scenario.reasoningText === "" && calls.length > 0;

  if (toolOnly) {
    frames.push(chunk({ role: "assistant", content: null, tool_calls: [opening(0)], refusal: null }));
  } else {
    frames.push(chunk({ role: "assistant", content: "", refusal: null }));
  }
  for (const piece of splitIntoWords(scenario.reasoningText)) {
    frames.push(chunk({ content: null, reasoning_content: piece }));
  }
  for (const piece of splitIntoWords(scenario.text)) frames.push(chunk({ content: piece }));
  calls.forEach((toolCall, index) => {
    if (!(toolOnly && index === 0)) frames.push(chunk({ tool_calls: [opening(index)] }));
    for (const fragment of splitIntoFragments(toolCall.argsJson)) {
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    }
  });

  const finishReason = OPENAI_FINISH_REASONS[scenario.finish];
  const usage = openaiChatUsage(scenario.usage);
  if (includeUsage && scenario.finalChunkHasChoicesAndUsage) {
    frames.push(sseData({ ...header, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }], usage }));
  } else {
    frames.push(chunk({}, finishReason));
    if (includeUsage) frames.push(sseData({ ...header, choices: [], usage }));
  }
  frames.push(sseData("[DONE]"));
  return frames;
}
