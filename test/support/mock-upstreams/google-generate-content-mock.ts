/**
 * Google Gemini, `POST {base}/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`, key in `x-goog-api-key`.
 * https://ai.google.dev/api/generate-content
 */
import { googleModelVersion } from "./echoed-model";
import {
  GOOGLE_FINISH_REASONS,
  functionCallParts,
  googleUsageMetadata,
  textPart,
  thoughtPart,
} from "./google-generate-content-parts";
import { renderGoogleGenerateContentStream } from "./google-generate-content-stream";
import { mockIds } from "./mock-ids";
import { isJsonObject, type JsonObject, type MockProtocol } from "./mock-protocol";

/** `{model}` is everything up to the LAST ":" (model ids may carry "@scenario" or even "/"). */
const ROUTE = /^\/(?:v1beta|v1)\/models\/(.+):(generateContent|streamGenerateContent)$/;

export const googleGenerateContentMock: MockProtocol = {
  protocol: "google-generate-content",
  basePath: "/v1beta",
  matchRoute(method, pathname, search) {
    const match = ROUTE.exec(pathname);
    if (method !== "POST" || match === null) return undefined;
    const stream = match[2] === "streamGenerateContent";
    return {
      model: decodeURIComponent(match[1] ?? ""),
      stream,
      jsonArrayStream: stream && search.get("alt") !== "sse",
    };
  },
  rejectRequest(headers, apiKey) {
    if (apiKey === undefined || headers.get("x-goog-api-key") === apiKey) return undefined;
    // The brief asks for a 401 on a bad key; the live API answers 400 INVALID_ARGUMENT with
    // the same ErrorInfo reason API_KEY_INVALID (vendor-errors.ts adds it to every 401).
    return { status: 401 };
  },
  maxTokens(body) {
    const config = body.generationConfig;
    return isJsonObject(config) && typeof config.maxOutputTokens === "number" ? config.maxOutputTokens : undefined;
  },
  renderResponse(scenario, call) {
    const parts: JsonObject[] = [];
    if (scenario.reasoningText !== "") parts.push(thoughtPart(scenario.reasoningText));
    if (scenario.text !== "") parts.push(textPart(scenario.text));
    parts.push(...functionCallParts(scenario));
    if (parts.length === 0) parts.push(textPart(""));
    const usage = scenario.usage;
    return {
      candidates: [
        { content: { parts, role: "model" }, finishReason: GOOGLE_FINISH_REASONS[scenario.finish], index: 0 },
      ],
      usageMetadata: googleUsageMetadata(usage.prompt, usage.completion, usage.reasoning, usage.cacheRead),
      modelVersion: googleModelVersion(call.model),
      responseId: mockIds.googleResponse(),
    };
  },
  renderStream: renderGoogleGenerateContentStream,
  streamHeaders: () => ({ "content-type": "text/event-stream", "cache-control": "no-cache" }),
  responseHeaders: () => ({ "content-type": "application/json; charset=UTF-8" }),
};
