/** What the generic mock server needs from one vendor's wire format. */
import type { MockError } from "./vendor-errors";
import type { UpstreamProtocol } from "./mock-types";
import type { ResolvedScenario } from "./resolve-scenario";

export type JsonObject = Record<string, unknown>;

/** One inference call, as the mock understood the request. */
export interface MockCall {
  /** The requested model id without its "@scenario" suffix. */
  model: string;
  stream: boolean;
  body: JsonObject;
  /** Google only: `:streamGenerateContent` without `alt=sse` answers a JSON array. */
  jsonArrayStream?: boolean;
}

/** The parts of a request the path and body decide, before any scenario applies. */
export interface MockRoute {
  /** The model id as requested (body.model or the Gemini path segment), suffix included. */
  model: string | undefined;
  stream: boolean;
  jsonArrayStream?: boolean;
}

export interface MockProtocol {
  protocol: UpstreamProtocol;
  /** "/v1" or "/v1beta": `baseUrl` is origin + basePath. */
  basePath: string;
  /** The call a request names, or undefined when the path is not an inference route (404). */
  matchRoute(method: string, pathname: string, search: URLSearchParams, body: JsonObject): MockRoute | undefined;
  /** A vendor rejection that comes before any scenario: credentials, required headers. */
  rejectRequest(headers: Headers, apiKey: string | undefined): MockError | undefined;
  /** The request's output token limit, if it set one. */
  maxTokens(body: JsonObject): number | undefined;
  /** The non-streaming response body. */
  renderResponse(scenario: ResolvedScenario, call: MockCall): unknown;
  /** The stream, one string per frame, terminal frame(s) included. */
  renderStream(scenario: ResolvedScenario, call: MockCall): string[];
  streamHeaders(): Record<string, string>;
  responseHeaders(): Record<string, string>;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function numberField(body: JsonObject, key: string): number | undefined {
  const value = body[key];
  return typeof value === "number" ? value : undefined;
}

/** `Authorization: Bearer <key>`, the OpenAI scheme. */
export function bearerToken(headers: Headers): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(headers.get("authorization") ?? "");
  return match?.[1];
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
