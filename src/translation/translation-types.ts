import type { BodyBytes } from "../http/request-body";
import { ApiError } from "../errors/api-error";
import type { ChargeSplice, IrError, IrFinish, IrRequest, IrResponse, IrStreamPart, IrUsage, IrWarning, ProtocolId, CodecContext } from "../ir";

/** What a translation saw, reported back to the pipeline for routing and metering. */
export interface TranslationSignals {
  /** The first non-empty semantic delta of the attempt, if it came in this call. */
  firstToken?: "text" | "reasoning" | "tool";
  /** Each usage report seen in this call, in order (usage frames for the request record). */
  usageFrames: IrUsage[];
  finish?: IrFinish;
  error?: IrError;
  /** UTF-8 bytes of output (text, reasoning, tool names and arguments) seen in this call: the bound an estimate of unreported completion tokens starts from (utf8-bytes.ts). */
  outputBytes: number;
  toolCalls: number;
  /** A response-side check refused the answer (its error, 403): nothing after it is sent. */
  refused?: IrError;
  /**
   * The refusal is of an action the client must take and its protocol cannot express: the
   * upstream's answer is complete, so the relay reads on to its usage (read-on-for-usage.ts).
   */
  refusedAction?: true;
}

/**
 * A response-side check over an answer's IR parts, run between decoding the upstream and
 * encoding for the client (the pipeline builds one when a guardrail has content patterns).
 * It may rewrite parts (redaction), hold some back, or refuse the rest of the answer.
 */
export interface PartGuard {
  onPart(part: IrStreamPart): GuardedOutput;
  /** What it still holds, when the upstream stream ends. */
  flush(): GuardedOutput;
}

export interface GuardedOutput {
  parts: IrStreamPart[];
  refused?: IrError;
}

/** The same check over a whole answer. */
export type ResponseRewrite = (response: IrResponse) => { response: IrResponse; refused?: IrError };

export interface DecodedRequest {
  request: IrRequest;
  warnings: IrWarning[];
}

/**
 * A client's request body: its text, or, for a large one, its UTF-8 bytes in the chunks it
 * was read in (src/http/request-body.ts), which the worker pool takes without the request
 * thread ever joining or decoding them.
 */
export type ClientBody = string | BodyBytes;

export interface EncodedUpstreamRequest {
  /** A Blob when a worker wrote a large body that is not ASCII: fetch sends its UTF-8 bytes as they are (worker-message.ts). */
  body: string | Blob;
  warnings: IrWarning[];
}

/**
 * An upstream's whole answer: its text, or, for a large one, its bytes in the chunks it was
 * read in (src/routing/body-reader.ts), which the worker pool takes without the request
 * thread joining or decoding them.
 */
export type UpstreamBody = string | BodyBytes;

export interface TranslatedResponse {
  /**
   * The client's body; for a same-protocol passthrough, the upstream bytes with only the
   * model id changed. A Blob of its UTF-8 bytes when a worker translated a large answer
   * (translation-handler.ts): the request thread sends it as it is.
   */
  body: string | Blob;
  /** With a Blob body: where the client codec's charge goes into it (its chargeSplice, `at` as a byte offset); absent: nowhere. */
  chargeAt?: ChargeSplice;
  signals: TranslationSignals;
  /** What the client's protocol could not carry of the answer (none for a passthrough). */
  warnings: IrWarning[];
}

export interface StreamOpenOptions {
  sessionId: string;
  upstream: ProtocolId;
  client: ProtocolId;
  context: Omit<CodecContext, "newId">;
  /** The client asked for a usage chunk (OpenAI `stream_options.include_usage`). */
  clientAskedUsage: boolean;
  /**
   * Same protocol: the pipeline forwards the upstream bytes itself; the session only
   * decodes them for accounting and the first-token signal, and emits nothing.
   */
  passthrough: boolean;
  /**
   * Error events the upstream sends are replaced by the gateway's own description (a
   * customer-supplied base: src/egress/opaque-upstream-error.ts); never with passthrough.
   */
  opaqueErrors?: boolean;
}

export interface StreamOutput {
  out: string;
  signals: TranslationSignals;
  /**
   * What the client's protocol could not carry, first reported in this call. Absent when
   * nothing was dropped (nearly always), so a chunk without a warning costs nothing more,
   * in memory or over the worker boundary.
   */
  warnings?: IrWarning[];
}

export function emptySignals(): TranslationSignals {
  return { usageFrames: [], outputBytes: 0, toolCalls: 0 };
}

/**
 * An output that came from a translation worker as JSON, its errors ApiErrors again: the
 * pipeline may throw them, and a thrown error is known by its class.
 */
export function withErrorsRevived<T extends { signals: TranslationSignals }>(output: T): T {
  const { error, refused } = output.signals;
  if (error) output.signals.error = ApiError.from(error);
  if (refused) output.signals.refused = ApiError.from(refused);
  return output;
}
