import type { IrStreamPart } from "../../ir";

/**
 * A tool call streamed by either OpenAI wire. Its id, name and argument text arrive in
 * fragments, in any order; it opens only once its name is known (a call without one
 * cannot be called by anyone), and argument text that came before is sent right after
 * the start.
 */
export interface PendingToolCall {
  index: number;
  id?: string;
  name?: string;
  /** Argument text that arrived before the name. */
  buffered: string;
  started: boolean;
}

/** Argument text for `call`: a delta once it is open, else kept until it opens. */
export function appendArguments(call: PendingToolCall, text: string, parts: IrStreamPart[]): void {
  if (!call.started) call.buffered += text;
  else if (text !== "") parts.push({ type: "tool_call_delta", index: call.index, argumentsDelta: text });
}

/** Opens `call` once its name is known: its start, then the argument text kept so far. */
export function openIfNamed(call: PendingToolCall, parts: IrStreamPart[]): void {
  if (call.started || call.name === undefined) return;
  call.started = true;
  parts.push({ type: "tool_call_start", index: call.index, id: call.id ?? `call_${call.index}`, name: call.name });
  if (call.buffered !== "") parts.push({ type: "tool_call_delta", index: call.index, argumentsDelta: call.buffered });
  call.buffered = "";
}
