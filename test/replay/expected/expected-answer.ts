/**
 * What a user should get from a recording, read from the recording alone by the readers in
 * this folder (one per upstream protocol, none importing src/): the gateway's answer in any
 * client protocol is checked against it (check-cell.ts).
 */
import type { UpstreamProtocol } from "../../support/mock-upstreams";
import type { Recording } from "../recording";
import { readAnthropicMessages } from "./read-anthropic-messages";
import { readGoogleGenerateContent } from "./read-google-generate-content";
import { readOpenaiChat } from "./read-openai-chat";
import { readOpenaiResponses } from "./read-openai-responses";

/** The canonical finish, as src/ir names it; each client's word for it is in check-cell.ts. */
export type Finish = "stop" | "length" | "tool_calls" | "content_filter" | "error" | "other";

export interface ExpectedToolCall {
  name: string;
  /** The parsed arguments object (`{}` for a call without arguments). */
  arguments: unknown;
}

/**
 * Usage normalised as the IR does (src/protocols/README.md): prompt includes cache reads and
 * writes, completion includes reasoning, whatever the vendor's own convention. Undefined:
 * not reported.
 */
export interface ExpectedUsage {
  prompt?: number;
  completion?: number;
  reasoning?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface ExpectedError {
  message: string;
  /** The HTTP statuses that say what the provider said (its `status_code`, or its error type's); empty when it names none. */
  statuses: number[];
}

export interface ExpectedAnswer {
  /** Every output text, concatenated in order. */
  text: string;
  /** Reasoning text (thinking, summaries, reasoning_content), concatenated. */
  reasoning: string;
  /** The reasoning carries the vendor's signature (Anthropic `signature`, Gemini `thoughtSignature`). */
  signedReasoning: boolean;
  /** Anthropic `redacted_thinking` blocks. */
  redactedReasoning: number;
  /** The reasoning is a summary of it (Responses `summary`), not the reasoning itself. */
  summarizedReasoning: boolean;
  /** Function calls the client must run, in order. */
  toolCalls: ExpectedToolCall[];
  finish: Finish;
  usage?: ExpectedUsage;
  /** Tools the provider ran itself (web search, code execution, MCP, …): their kinds, in order. */
  serverTools: string[];
  /** URLs (or titles) the answer cites, in order, without repeats. */
  citations: string[];
  /** What each of `citations` is: it decides which client protocols have a place for it. */
  citationKinds: Record<string, CitationKind>;
  /** Actions the provider asks the client to take that are not function calls (local shell, MCP approval, …). */
  hostedCalls: string[];
  /** The provider's error inside a 200 answer (an SSE error event, a failed response). */
  error?: ExpectedError;
}

export function emptyAnswer(): ExpectedAnswer {
  return {
    text: "",
    reasoning: "",
    signedReasoning: false,
    redactedReasoning: 0,
    summarizedReasoning: false,
    toolCalls: [],
    finish: "other",
    serverTools: [],
    citations: [],
    citationKinds: {},
    hostedCalls: [],
  };
}

/**
 * What a citation is:
 * - `web`: a page the text cites (chat and Responses `url_citation`, Anthropic
 *   `web_search_result_location`, a Gemini grounding chunk a support points to);
 * - `found`: a page a search found that no span of the text cites (a Gemini grounding chunk
 *   without a support): a search result;
 * - `file`: a file the text cites (Responses `file_citation`, `container_file_citation`);
 * - `document`: a document of the request (Anthropic `char_location`, `page_location`, …);
 * - `read-page`: a page Gemini's URL context tool read (`urlContextMetadata`).
 */
export type CitationKind = "web" | "found" | "file" | "document" | "read-page";

/** Adds a citation once; a page cited later by a span is `web` even if first seen as `found`. */
export function cite(answer: ExpectedAnswer, source: unknown, kind: CitationKind): void {
  if (typeof source !== "string" || source === "") return;
  if (!answer.citations.includes(source)) answer.citations.push(source);
  if (answer.citationKinds[source] === undefined || kind === "web") answer.citationKinds[source] = kind;
}

/** Tool arguments as JSON text → the parsed object; `{}` for empty text. */
export function parseArguments(text: unknown): unknown {
  if (typeof text !== "string") return text ?? {};
  if (text.trim() === "") return {};
  return JSON.parse(text);
}

const READERS: Readonly<Record<UpstreamProtocol, (bytes: string, mode: Recording["mode"]) => ExpectedAnswer>> = {
  "openai-chat": readOpenaiChat,
  "openai-responses": readOpenaiResponses,
  "anthropic-messages": readAnthropicMessages,
  "google-generate-content": readGoogleGenerateContent,
};

export function expectedAnswer(recording: Recording): ExpectedAnswer {
  return READERS[recording.protocol](recording.bytes, recording.mode);
}
