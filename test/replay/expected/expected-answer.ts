/**
 * What a user should get from a recording, read from the recording alone by the readers in
 * this folder (one per upstream protocol, none importing src/): the gateway's answer in any
 * client protocol is checked against it (check-cell.ts).
 */
import type { UpstreamProtocol } from "../../helpers/mock-upstreams";
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
    hostedCalls: [],
  };
}

/** Adds a citation once. */
export function cite(answer: ExpectedAnswer, source: unknown): void {
  if (typeof source === "string" && source !== "" && !answer.citations.includes(source)) answer.citations.push(source);
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
