import type { IrContentPart } from "./ir-content";
import type { IrWarning } from "./ir-warning";

/** Canonical finish reasons. `raw` keeps the native string. */
export type IrFinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "error" | "other";

export interface IrFinish {
  reason: IrFinishReason;
  /** The upstream's own value, so same-protocol round trips stay exact. */
  raw?: string;
}

/**
 * Token usage, normalised: prompt is inclusive of cache read and
 * write, completion is inclusive of reasoning. `undefined` means "not reported",
 * which is different from 0.
 */
export interface IrUsage {
  promptTokens?: number;
  completionTokens?: number;
  reasoningTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  webSearchCount?: number;
  /** The provider's usage object verbatim. */
  raw?: unknown;
}

export interface IrResponse {
  id?: string;
  /** Model id the upstream reported (informational; never used for pricing). */
  model?: string;
  content: IrContentPart[];
  finish: IrFinish;
  usage?: IrUsage;
  /**
   * What the response decoder could not read into the IR (a vendor's content part the IR
   * has no place for), named as the encoders name what they drop. Absent: nothing skipped.
   */
  warnings?: IrWarning[];
  /**
   * An action the upstream asks the client to take that the IR cannot carry (a Responses
   * hosted tool call: `local_shell_call`, `mcp_approval_request`, `computer_call`, …). Only
   * a same-protocol relay delivers it; a translation refuses the answer (translate-response.ts).
   */
  clientAction?: string;
}
