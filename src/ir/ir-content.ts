import type { ProtocolId } from "./protocol-id";

/**
 * One piece of message content. The IR is the contract between the four codecs:
 * a field joins it only when two protocols need it; protocol-only extras ride in
 * `IrRequest.extras` so same-protocol traffic keeps them.
 */
export type IrContentPart =
  | IrTextPart
  | IrReasoningPart
  | IrImagePart
  | IrFilePart
  | IrToolCallPart
  | IrToolResultPart;

export interface IrTextPart {
  type: "text";
  text: string;
  /** Anthropic prompt-caching marker, kept verbatim for Messages upstreams. */
  cacheControl?: unknown;
}

export interface IrReasoningPart {
  type: "reasoning";
  text: string;
  /**
   * A vendor signature over the reasoning (Anthropic `thinking.signature`, Gemini
   * `thoughtSignature`). Only meaningful to the protocol named in `signatureProtocol`.
   */
  signature?: string;
  signatureProtocol?: ProtocolId;
  /** Anthropic `redacted_thinking.data`: opaque, only replayable to Anthropic. */
  redactedData?: string;
}

export interface IrImagePart {
  type: "image";
  mediaType?: string;
  /** base64 payload without the data-URL prefix */
  data?: string;
  url?: string;
  detail?: string;
}

export interface IrFilePart {
  type: "file";
  mediaType?: string;
  data?: string;
  url?: string;
  filename?: string;
}

export interface IrToolCallPart {
  type: "tool_call";
  id: string;
  name: string;
  /** JSON text of the arguments object, exactly as the model produced it. */
  arguments: string;
  /** Gemini `thoughtSignature` on a functionCall part, replayed to Gemini only. */
  signature?: string;
}

export interface IrToolResultPart {
  type: "tool_result";
  callId: string;
  toolName?: string;
  /** Text output, or rich parts (text and images) where the protocol allows them. */
  output: string | Array<IrTextPart | IrImagePart>;
  isError?: boolean;
}
