import type { IrContentPart, IrRequest } from "../ir";
import type { ModelTokenLimits } from "../providers/catalog";

/**
 * An upper bound on the prompt tokens a request can bill, for admission (src/admission/README.md).
 *
 * The argument: every tokenizer the upstreams use (byte-level BPE, SentencePiece with byte
 * fallback) turns n bytes of UTF-8 into at most n tokens. What an upstream tokenizes is the
 * text we send it (system, messages, reasoning carried back, tool calls and results, tool
 * definitions, response schemas), each string verbatim or re-rendered no longer than its
 * JSON, wrapped in the provider's chat template. So the bound is the UTF-8 bytes of those
 * strings, plus a generous allowance for the template per request, message, part and tool
 * (Anthropic's tool-use system prompt alone is a few hundred tokens), plus a per-item
 * bound for images and files, which bill by pixels or pages rather than by their base64
 * bytes. It is computed from the IR, before any upstream body is encoded, and is the same
 * for every candidate apart from the model's own limits.
 *
 * A prompt is never billed above the model's context window: the upstream refuses it
 * unbilled. Fields that pull in context stored upstream (`previous_response_id`,
 * `cachedContent`, hosted tools, …) make the request's own bytes meaningless as a bound,
 * so those requests are bounded by the context window alone.
 */

export const PROMPT_OVERHEAD_TOKENS = { request: 64, message: 16, part: 8, toolsPreamble: 1_024, tool: 32 } as const;

/**
 * Per-item bounds when the catalog states none: gpt-4o-mini bills a high-detail image of
 * 8 tiles at 48,169 tokens, the largest per-image count among the supported vendors; a
 * file (a PDF of hundreds of pages, audio, video) is bounded by the largest context window.
 */
export const DEFAULT_TOKENS_PER_IMAGE = 50_000;
export const DEFAULT_TOKENS_PER_FILE = 2_000_000;
/** The context window assumed for a model the catalog gives none. */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 2_000_000;

/**
 * Extras fields whose prompt lives upstream: stored responses and prompts, caches, and
 * server-side tools (every wire's non-function tools ride in extras `tools`; their
 * results, e.g. search pages, are billed as input).
 */
const UPSTREAM_CONTEXT_FIELDS = ["previous_response_id", "conversation", "prompt", "cachedContent", "cached_content", "tools", "web_search_options", "mcp_servers", "container"];

/** The candidate-independent part of the bound: text bytes, template allowance, media items. */
export interface PromptShape {
  /** UTF-8 bytes plus template allowance, in tokens. */
  textTokens: number;
  images: number;
  files: number;
  /** The request refers to context stored upstream: only the context window bounds it. */
  upstreamContext: boolean;
}

function bytes(text: string | undefined): number {
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}

function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : bytes(JSON.stringify(value));
}

export function promptShape(request: IrRequest): PromptShape {
  const shape: PromptShape = { textTokens: PROMPT_OVERHEAD_TOKENS.request + bytes(request.system), images: 0, files: 0, upstreamContext: false };
  const addPart = (part: IrContentPart) => {
    shape.textTokens += PROMPT_OVERHEAD_TOKENS.part;
    switch (part.type) {
      case "text":
        shape.textTokens += bytes(part.text);
        break;
      case "reasoning":
        // Signatures and redacted blocks are opaque to us; their bytes outnumber any tokens they stand for.
        shape.textTokens += bytes(part.text) + bytes(part.signature) + bytes(part.redactedData);
        break;
      case "tool_call":
        shape.textTokens += bytes(part.id) + bytes(part.name) + bytes(part.arguments) + bytes(part.signature);
        break;
      case "tool_result":
        shape.textTokens += bytes(part.callId) + bytes(part.toolName);
        if (typeof part.output === "string") shape.textTokens += bytes(part.output);
        else for (const inner of part.output) addPart(inner);
        break;
      case "image":
        shape.images++;
        break;
      case "file":
        shape.files++;
        shape.textTokens += bytes(part.filename);
        break;
    }
  };
  for (const message of request.messages) {
    shape.textTokens += PROMPT_OVERHEAD_TOKENS.message;
    for (const part of message.content) addPart(part);
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    shape.textTokens += PROMPT_OVERHEAD_TOKENS.toolsPreamble;
    for (const tool of request.tools) {
      shape.textTokens += PROMPT_OVERHEAD_TOKENS.tool + bytes(tool.name) + bytes(tool.description) + jsonBytes(tool.parameters);
    }
  }
  const format = request.responseFormat;
  if (format?.type === "json_schema") {
    shape.textTokens += PROMPT_OVERHEAD_TOKENS.toolsPreamble + bytes(format.name) + bytes(format.description) + jsonBytes(format.schema);
  }
  if (request.extras !== undefined) {
    // Unmapped fields reach a same-protocol upstream verbatim; whatever of them is prompt is within their bytes.
    shape.textTokens += jsonBytes(request.extras.fields);
    shape.upstreamContext = UPSTREAM_CONTEXT_FIELDS.some((field) => request.extras!.fields[field] !== undefined);
  }
  return shape;
}

/** The most prompt tokens the request can bill on a model with these limits. */
export function promptTokenCeiling(shape: PromptShape, limits: ModelTokenLimits): number {
  const window = limits.maxInputTokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS;
  if (shape.upstreamContext) return window;
  const media = shape.images * (limits.maxTokensPerImage ?? DEFAULT_TOKENS_PER_IMAGE) + shape.files * (limits.maxTokensPerFile ?? DEFAULT_TOKENS_PER_FILE);
  return Math.min(shape.textTokens + media, window);
}
