import type { IrFinish, IrFinishReason } from "../../ir";

/**
 * Chat `finish_reason` <-> canonical finish. Values from
 * platform.openai.com/docs/api-reference/chat/object (`stop`, `length`, `tool_calls`,
 * `content_filter`, deprecated `function_call`); `end_turn` and `max_tokens` are accepted
 * because some OpenAI-compatible providers echo Anthropic's names. The native string is
 * kept in `raw` so a same-protocol round trip is exact.
 */
const DECODE: Record<string, IrFinishReason> = {
  stop: "stop",
  end_turn: "stop",
  length: "length",
  max_tokens: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

export function decodeChatFinishReason(raw: unknown): IrFinish {
  if (typeof raw !== "string" || raw === "") return { reason: "other" };
  // Own keys only: "constructor" from an upstream is an unknown reason, not Object.prototype's.
  return { reason: Object.hasOwn(DECODE, raw) ? DECODE[raw]! : "other", raw };
}

const ENCODE: Record<Exclude<IrFinishReason, "other">, string> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  content_filter: "content_filter",
  // An error that still produced a response ends as `stop`; the error itself travels in an error frame.
  error: "stop",
};

/** `hasToolCalls` forces `tool_calls`: agents stop mid-task when a tool turn ends with `stop`. */
export function encodeChatFinishReason(finish: IrFinish, hasToolCalls: boolean): string {
  if (hasToolCalls) return "tool_calls";
  if (finish.reason === "other") return finish.raw ?? "stop";
  if (finish.reason === "tool_calls") return finish.raw === "function_call" ? "function_call" : "tool_calls";
  return ENCODE[finish.reason];
}
