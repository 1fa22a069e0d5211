/**
 * OpenAI Chat Completions, `POST {base}/chat/completions`.
 * https://platform.openai.com/docs/api-reference/chat/object
 */
import { openaiEchoedModel } from "./echoed-model";
import { mockIds } from "./mock-ids";
import { numberField, unixSeconds, type JsonObject, type MockCall, type MockProtocol } from "./mock-protocol";
import { rejectOpenaiRequest } from "./openai-auth";
import { renderOpenaiChatStream } from "./openai-chat-stream";
import { OPENAI_FINISH_REASONS, openaiChatUsage } from "./openai-chat-usage";
import type { ResolvedScenario } from "./resolve-scenario";
import { SSE_HEADERS } from "./sse-frames";

function renderResponse(scenario: ResolvedScenario, call: MockCall): unknown {
  const toolCalls = scenario.toolCalls.map((toolCall) => ({
    id: mockIds.openaiToolCall(),
    type: "function",
    function: { name: toolCall.name, arguments: toolCall.argsJson },
  }));
  const message: JsonObject = {
    role: "assistant",
    // Null, not "", when the turn is only tool calls: decoders must cope with both.
    content: scenario.text === "" && toolCalls.length > 0 ? null : scenario.text,
    refusal: null,
    annotations: [],
  };
  // DeepSeek-style reasoning field, the de facto extension of OpenAI-compatible providers.
  if (scenario.reasoningText !== "") message.reasoning_content = scenario.reasoningText;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: mockIds.chatCompletion(),
    object: "chat.completion",
    created: unixSeconds(),
    model: openaiEchoedModel(call.model),
    choices: [{ index: 0, message, logprobs: null, finish_reason: OPENAI_FINISH_REASONS[scenario.finish] }],
    usage: openaiChatUsage(scenario.usage),
    service_tier: "default",
    system_fingerprint: mockIds.systemFingerprint(),
  };
}

export const openaiChatMock: MockProtocol = {
  protocol: "openai-chat",
  basePath: "/v1",
  matchRoute(method, pathname, _search, body) {
    if (method !== "POST" || pathname !== "/v1/chat/completions") return undefined;
    return { model: typeof body.model === "string" ? body.model : undefined, stream: body.stream === true };
  },
  rejectRequest: rejectOpenaiRequest,
  maxTokens: (body) => numberField(body, "max_completion_tokens") ?? numberField(body, "max_tokens"),
  renderResponse,
  renderStream: renderOpenaiChatStream,
  streamHeaders: () => ({ ...SSE_HEADERS, "x-request-id": mockIds.requestId() }),
  responseHeaders: () => ({ "content-type": "application/json", "x-request-id": mockIds.requestId() }),
};
