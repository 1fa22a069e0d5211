/**
 * The Anthropic Messages wire shapes this codec writes (a subset of
 * https://docs.anthropic.com/en/api/messages). Decoders read untrusted JSON through
 * `../shared/json-fields.ts` instead of trusting these types.
 */
export type AnthropicImageSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string };

export type AnthropicDocumentSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "text"; media_type: "text/plain"; data: string }
  | { type: "url"; url: string };

export interface AnthropicTextBlock {
  /** Anthropic writes a cited block's `citations` first. */
  citations?: unknown[];
  type: "text";
  text: string;
  cache_control?: unknown;
}

/** A search Anthropic ran (`server_tool_use` named `web_search`). */
export interface AnthropicServerToolUseBlock {
  type: "server_tool_use";
  id: string;
  name: "web_search";
  input: Record<string, unknown>;
}

export interface AnthropicWebSearchResult {
  type: "web_search_result";
  title: string;
  url: string;
  encrypted_content: string;
  page_age: string | null;
}

export interface AnthropicWebSearchToolResultBlock {
  type: "web_search_tool_result";
  tool_use_id: string;
  content: AnthropicWebSearchResult[] | { type: "web_search_tool_result_error"; error_code: string };
}

export interface AnthropicImageBlock {
  type: "image";
  source: AnthropicImageSource;
}

export interface AnthropicDocumentBlock {
  type: "document";
  source: AnthropicDocumentSource;
  title?: string;
}

export interface AnthropicThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
  is_error?: boolean;
}

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicServerToolUseBlock
  | AnthropicWebSearchToolResultBlock;

export interface AnthropicMessage {
  role: "user" | "assistant" | "system";
  content: AnthropicContentBlock[];
}

/** The usage object of a Messages response and of `message_delta` (all counts optional on the wire). */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  server_tool_use?: { web_search_requests: number };
}

export type AnthropicStopReason =
  | "end_turn"
  | "max_tokens"
  | "stop_sequence"
  | "tool_use"
  | "pause_turn"
  | "refusal"
  | "model_context_window_exceeded";
