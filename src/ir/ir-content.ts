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
  | IrToolResultPart
  | IrWebSearchPart;

export interface IrTextPart {
  type: "text";
  text: string;
  /** Anthropic prompt-caching marker, kept verbatim for Messages upstreams. */
  cacheControl?: unknown;
  /** The sources this text cites (an answer's citations, URL annotations or grounding). */
  citations?: IrCitation[];
}

/**
 * A source an answer's text cites: a web page (chat and Responses `url_citation`,
 * Anthropic `web_search_result_location`, a Gemini grounding chunk's `web`), or a document
 * of the request (Anthropic `char_location`, `page_location`, `content_block_location`).
 */
export interface IrCitation {
  /** The cited page. Absent for a document citation. */
  url?: string;
  title?: string;
  /** The passage cited, where the vendor gives it (Anthropic `cited_text`, a Gemini segment's text). */
  citedText?: string;
  /**
   * The span of the text part this citation supports, as JavaScript string indices
   * (UTF-16 code units) into `IrTextPart.text`, end exclusive. Absent: the whole part
   * (Anthropic cites by block, not by span).
   */
  start?: number;
  end?: number;
  /**
   * A citation of a request document, verbatim, with the protocol that produced it: its
   * location only means something to that vendor (other clients get a warning).
   */
  document?: { protocol: ProtocolId; raw: unknown };
  /** The producing vendor's opaque token for the cited passage (Anthropic `encrypted_index`). */
  sealed?: IrSealed;
}

/**
 * A vendor's opaque token, meaningful only to the protocol that produced it (Anthropic's
 * `encrypted_index` and `encrypted_content`): an answer re-encoded for that protocol (a
 * response-side check, a customer-supplied base) gives it back as it came, because the
 * client sends it to the vendor again with its next turn.
 */
export interface IrSealed {
  protocol: ProtocolId;
  value: string;
}

/**
 * A web search the provider ran while answering (Responses `web_search_call`, Anthropic
 * `server_tool_use` named `web_search` with its `web_search_tool_result`, Gemini grounding's
 * `webSearchQueries` and chunks): the call and its results in one part, in answer order.
 * Only answers carry it; a request's history never sends it upstream (a hosted search is
 * not replayable to another vendor, and the vendor's own history is relayed as is).
 */
export interface IrWebSearchPart {
  type: "web_search";
  /** The provider's id of the call (Responses item id, Anthropic `srvtoolu_…`), or a derived one. */
  id: string;
  /** The queries it ran (one for Responses and Anthropic; Gemini may run several). */
  queries: string[];
  /** The pages it found, in the provider's order, where it reports them. */
  results: IrWebSearchResult[];
  /** The provider's error code when the search failed (Anthropic `web_search_tool_result_error`). */
  errorCode?: string;
}

export interface IrWebSearchResult {
  url: string;
  title?: string;
  /** Anthropic `page_age`. */
  pageAge?: string;
  /** The page's content as the vendor sealed it (Anthropic `encrypted_content`). */
  sealed?: IrSealed;
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
