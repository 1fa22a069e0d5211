import type { IrContentPart } from "./ir-content";
import type { ProtocolId } from "./protocol-id";

export type IrRole = "system" | "user" | "assistant" | "tool";

export interface IrMessage {
  role: IrRole;
  content: IrContentPart[];
}

export interface IrTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type IrToolChoice =
  | { type: "auto" }
  | { type: "required" }
  | { type: "none" }
  | { type: "tool"; name: string };

export type IrResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  /** `schema` is JSON Schema, whatever the client's protocol wrote. */
  | { type: "json_schema"; name: string; description?: string; schema: Record<string, unknown>; strict?: boolean };

export type IrReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

export interface IrGenerationParams {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  reasoningEffort?: IrReasoningEffort;
  /** Anthropic `thinking` budget in tokens, when the client set one. */
  thinkingBudgetTokens?: number;
}

export interface IrRequest {
  /** The model string exactly as the client sent it (`<provider>/<model>[:profile]`). */
  model: string;
  /** Fallback models from the body field `models` (Switchyard extension, max 8). */
  models?: string[];
  /** System prompt; protocols that allow several are joined with "\n". */
  system?: string;
  /** Anthropic `cache_control` on the system block, kept for Messages upstreams. */
  systemCacheControl?: unknown;
  messages: IrMessage[];
  tools?: IrTool[];
  toolChoice?: IrToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: IrResponseFormat;
  params: IrGenerationParams;
  stream: boolean;
  /**
   * OpenAI `store`: carried between the OpenAI wires; `true` cannot
   * be honoured by Anthropic or Gemini upstreams, whose encoders refuse it.
   */
  store?: boolean;
  /** The client asked for a usage chunk in its stream (OpenAI `stream_options.include_usage`). */
  streamIncludeUsage?: boolean;
  /**
   * Fields the decoder did not map into the IR, with the protocol they came from.
   * An encoder for the same protocol copies them back; other encoders ignore them
   * and report a warning.
   */
  extras?: { protocol: ProtocolId; fields: Record<string, unknown> };
}
