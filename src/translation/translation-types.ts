import type { IrError, IrFinish, IrRequest, IrUsage, IrWarning, ProtocolId, CodecContext } from "../ir";

/** What a translation saw, reported back to the pipeline for routing and metering. */
export interface TranslationSignals {
  /** The first non-empty semantic delta of the attempt, if it came in this call. */
  firstToken?: "text" | "reasoning" | "tool";
  /** Each usage report seen in this call, in order (usage frames for the request record). */
  usageFrames: IrUsage[];
  finish?: IrFinish;
  error?: IrError;
  /** Characters of output (text, reasoning, tool arguments) seen in this call: the disconnect estimator's input. */
  outputChars: number;
  toolCalls: number;
}

export interface DecodedRequest {
  request: IrRequest;
  warnings: IrWarning[];
}

export interface EncodedUpstreamRequest {
  body: string;
  warnings: IrWarning[];
}

export interface TranslatedResponse {
  /** The client's body; for a same-protocol passthrough, the upstream bytes with only the model id changed. */
  body: string;
  signals: TranslationSignals;
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
}

export interface StreamOutput {
  out: string;
  signals: TranslationSignals;
}

export function emptySignals(): TranslationSignals {
  return { usageFrames: [], outputChars: 0, toolCalls: 0 };
}
