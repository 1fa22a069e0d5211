/**
 * OpenAI Responses, `POST {base}/responses`.
 * https://platform.openai.com/docs/api-reference/responses/create
 */
import { mockIds } from "./mock-ids";
import { numberField, unixSeconds, type MockProtocol } from "./mock-protocol";
import { rejectOpenaiRequest } from "./openai-auth";
import {
  completedItem,
  responseObject,
  responsesItems,
  responseStatus,
  responsesUsage,
} from "./openai-responses-items";
import { renderOpenaiResponsesStream } from "./openai-responses-stream";
import { SSE_HEADERS } from "./sse-frames";

export const openaiResponsesMock: MockProtocol = {
  protocol: "openai-responses",
  basePath: "/v1",
  matchRoute(method, pathname, _search, body) {
    if (method !== "POST" || pathname !== "/v1/responses") return undefined;
    return { model: typeof body.model === "string" ? body.model : undefined, stream: body.stream === true };
  },
  rejectRequest: rejectOpenaiRequest,
  maxTokens: (body) => numberField(body, "max_output_tokens"),
  renderResponse(scenario, call) {
    const envelope = { id: mockIds.response(), createdAt: unixSeconds() };
    return responseObject(envelope, call, {
      ...responseStatus(scenario),
      output: responsesItems(scenario).map(completedItem),
      usage: responsesUsage(scenario.usage),
    });
  },
  renderStream: renderOpenaiResponsesStream,
  streamHeaders: () => ({ ...SSE_HEADERS, "x-request-id": mockIds.requestId() }),
  responseHeaders: () => ({ "content-type": "application/json", "x-request-id": mockIds.requestId() }),
};
