import type { IrFinish, IrFinishReason } from "../../ir";
import type { AnthropicStopReason } from "./wire-types";

/**
 * `stop_reason` ↔ canonical finish. Values from
 * https://docs.anthropic.com/en/api/handling-stop-reasons:
 * end_turn / stop_sequence = the model stopped; max_tokens and
 * model_context_window_exceeded = cut off; tool_use; refusal = streaming classifiers
 * intervened; pause_turn = a server tool loop paused (no canonical equivalent).
 */
const STOP_REASON_TO_FINISH: Record<AnthropicStopReason, IrFinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
  pause_turn: "other",
};

const FINISH_TO_STOP_REASON: Record<IrFinishReason, AnthropicStopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  content_filter: "refusal",
  // An upstream error is reported in its own `event: error` frame; the turn itself ends normally.
  error: "end_turn",
  other: "end_turn",
};

function isAnthropicStopReason(value: string): value is AnthropicStopReason {
  return Object.hasOwn(STOP_REASON_TO_FINISH, value);
}

export function mapAnthropicStopReason(stopReason: unknown): IrFinish {
  if (typeof stopReason !== "string") return { reason: "other" };
  const reason = isAnthropicStopReason(stopReason) ? STOP_REASON_TO_FINISH[stopReason] : "other";
  return { reason, raw: stopReason };
}

/**
 * Canonical finish -> `stop_reason`. A raw value that is itself an Anthropic stop reason
 * with the same meaning is kept, so Anthropic -> Anthropic stays exact (stop_sequence,
 * pause_turn). Whenever the turn carried a tool call the answer is `tool_use`: agents
 * stop mid-task on `end_turn` (a turn can mix text and tool calls).
 */
export function toAnthropicStopReason(finish: IrFinish | undefined, hasToolCalls: boolean): AnthropicStopReason {
  if (hasToolCalls) return "tool_use";
  if (finish === undefined) return "end_turn";
  const raw = finish.raw;
  if (raw !== undefined && isAnthropicStopReason(raw) && STOP_REASON_TO_FINISH[raw] === finish.reason) return raw;
  // A tool_calls finish without a tool call in the content cannot be tool_use (the client would wait for one).
  if (finish.reason === "tool_calls") return "end_turn";
  return FINISH_TO_STOP_REASON[finish.reason];
}
