/**
 * Anthropic Messages, `POST {base}/messages` with `x-api-key` and `anthropic-version`.
 * https://docs.anthropic.com/en/api/messages
 */
import { anthropicEchoedModel } from "./echoed-model";
import {
  ANTHROPIC_STOP_REASONS,
  anthropicBlockBody,
  anthropicBlocks,
  anthropicUsage,
} from "./anthropic-messages-content";
import { renderAnthropicMessagesStream } from "./anthropic-messages-stream";
import { mockIds } from "./mock-ids";
import { bearerToken, numberField, type MockProtocol } from "./mock-protocol";
import { SSE_HEADERS } from "./sse-frames";

export const anthropicMessagesMock: MockProtocol = {
  protocol: "anthropic-messages",
  basePath: "/v1",
  matchRoute(method, pathname, _search, body) {
    if (method !== "POST" || pathname !== "/v1/messages") return undefined;
    return { model: typeof body.model === "string" ? body.model : undefined, stream: body.stream === true };
  },
  rejectRequest(headers, apiKey) {
    if (apiKey !== undefined) {
      // `x-api-key` is the documented header; current SDKs send `Authorization: Bearer`.
      const given = headers.get("x-api-key") ?? bearerToken(headers);
      if (given === undefined) return { status: 401, message: "x-api-key header is required" };
      if (given !== apiKey) return { status: 401, message: "invalid x-api-key" };
    }
    if (headers.get("anthropic-version") === null) {
      return { status: 400, message: "anthropic-version: header is required" };
    }
    return undefined;
  },
  maxTokens: (body) => numberField(body, "max_tokens"),
  renderResponse(scenario, call) {
    return {
      id: mockIds.anthropicMessage(),
      type: "message",
      role: "assistant",
      model: anthropicEchoedModel(call.model),
      content: anthropicBlocks(scenario).map(anthropicBlockBody),
      stop_reason: ANTHROPIC_STOP_REASONS[scenario.finish],
      stop_sequence: null,
      usage: anthropicUsage(scenario.usage),
    };
  },
  renderStream: renderAnthropicMessagesStream,
  streamHeaders: () => ({ ...SSE_HEADERS, "request-id": mockIds.requestId() }),
  responseHeaders: () => ({ "content-type": "application/json", "request-id": mockIds.requestId() }),
};
