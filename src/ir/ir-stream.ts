import type { IrCitation, IrWebSearchPart } from "./ir-content";
import type { IrFinish, IrUsage } from "./ir-response";
import type { IrError } from "./ir-error";
import type { ProtocolId } from "./protocol-id";

/**
 * Stream parts with a start/delta/end lifecycle. Decoders produce them from an
 * upstream's SSE events; encoders turn them into the client's SSE events.
 *
 * Tool calls are keyed by `index` (order of appearance in the turn, from 0).
 * `tool_call_start` always carries the name; decoders buffer argument fragments
 * that arrive before the name is known.
 *
 * A signature or redacted reasoning names the protocol that produced it (as
 * `IrReasoningPart.signatureProtocol` does): it is only meaningful to that vendor.
 *
 * A `citation` belongs to the current text part: the text deltas since the last part of
 * another kind (reasoning, tool call, web search), or since the start. Its `start`/`end`
 * index that part's text; it may come before, amid or after the text it cites (Anthropic
 * sends a block's citations ahead of its text, OpenAI and Gemini after), but always before
 * the next part of another kind. A `web_search` comes whole, once the provider has its
 * results, in answer order.
 */
export type IrStreamPart =
  | { type: "start"; id?: string; model?: string }
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "reasoning_signature"; signature: string; protocol: ProtocolId }
  | { type: "redacted_reasoning"; data: string; protocol: ProtocolId }
  | { type: "tool_call_start"; index: number; id: string; name: string }
  | { type: "tool_call_delta"; index: number; argumentsDelta: string }
  | { type: "tool_call_end"; index: number }
  | { type: "citation"; citation: IrCitation }
  | { type: "web_search"; search: IrWebSearchPart }
  | { type: "usage"; usage: IrUsage }
  | { type: "finish"; finish: IrFinish }
  | { type: "error"; error: IrError };
