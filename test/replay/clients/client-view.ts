/**
 * What a client saw of one answer, read through its official SDK the way an application
 * reads it: a whole answer from the SDK's object, a stream from its events in order.
 * Values stay in the client's own vocabulary (check-cell.ts maps the expectation onto it).
 */
import type { ClientName } from "../../policy-enforcement/enforcement-support";

export interface ClientRequest {
  /** The gateway's origin. */
  baseUrl: string;
  apiKey: string;
  /** The catalog model id. */
  model: string;
  stream: boolean;
  prompt: string;
  maxTokens: number;
  /** Sent as `x-request-id`, to find the request record. */
  requestId: string;
}

export interface ClientToolCall {
  name: string;
  /** Parsed; the raw text when it is not JSON. */
  arguments: unknown;
}

export interface ClientView {
  client: ClientName;
  /** The SDK answered without throwing and the stream carried no error event. */
  ok: boolean;
  /** The error the SDK threw or the stream's error event: its HTTP status where the SDK has one. */
  error?: { status?: number; message: string };
  text: string;
  reasoning: string;
  /** Anthropic `redacted_thinking` blocks. */
  redactedReasoning: number;
  toolCalls: ClientToolCall[];
  /**
   * The finish in the client's words: chat `finish_reason`; Responses `status`, or
   * `incomplete:<reason>`; Messages `stop_reason`; Gemini `finishReason`.
   */
  finish?: string;
  /** The usage object as the client received it (the last one of a stream). */
  usage?: Record<string, any>;
  /** Cited URLs (chat and Responses annotations, Messages citations, Gemini grounding chunks). */
  citations: string[];
  /** Server-tool items the client's protocol carried (Responses items, Messages blocks, Gemini code and search). */
  serverTools: string[];
  /** Pages a web search found, where the client's protocol lists them (Responses `action.sources`, Messages `web_search_tool_result`). */
  searchResults: string[];
  /** Responses items the client must act on (local shell, MCP approval, …). */
  hostedCalls: string[];
  /** `x-switchyard-warnings` of the answer's head. */
  warningsHeader: string | null;
}

export function emptyView(client: ClientName): ClientView {
  return {
    client,
    ok: true,
    text: "",
    reasoning: "",
    redactedReasoning: 0,
    toolCalls: [],
    citations: [],
    serverTools: [],
    searchResults: [],
    hostedCalls: [],
    warningsHeader: null,
  };
}

/** Tool arguments as the client got them: JSON text parsed (`{}` for none), anything else kept. */
export function parsedArguments(value: unknown): unknown {
  if (typeof value !== "string") return value ?? {};
  if (value.trim() === "") return {};
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

export function addSearchResult(view: ClientView, url: unknown): void {
  if (typeof url === "string" && url !== "" && !view.searchResults.includes(url)) view.searchResults.push(url);
}

export function addCitation(view: ClientView, source: unknown): void {
  if (typeof source === "string" && source !== "" && !view.citations.includes(source)) view.citations.push(source);
}
