import type { IrWarning } from "../../ir";

/**
 * The warnings response and stream encoders give when the client's protocol cannot carry
 * part of an answer. Their fields start with `output.` so a client (and the request record)
 * can tell them from the request-side warnings, whose fields are paths in the request.
 *
 * A vendor's signature over reasoning is not content: it is meaningful only to that
 * vendor, so no encoder warns for leaving one out; its loss surfaces on the next request,
 * whose encoder cannot replay the unsigned reasoning and says so.
 */
export type DroppedOutput = "reasoning" | "redacted_reasoning" | "image" | "file" | "after_finish" | "citations" | "web_search";

export function droppedOutput(kind: DroppedOutput, message: string): IrWarning {
  return { code: "dropped_content", field: `output.${kind}`, message };
}

/** A tool call whose arguments are not a JSON object, on a wire that needs one. */
export function invalidToolArguments(callId: string): IrWarning {
  return { code: "invalid_tool_arguments", field: "output.tool_calls", message: `tool call ${callId} arguments are not a JSON object; sent as {}` };
}

/**
 * What a decoder skips of an upstream answer because the IR has no place for it (a
 * server-tool block, a hosted tool item, a file annotation, URL context), named by the upstream's own
 * word for it: `dropped_content`, `output.<kind>`, once per kind per answer. `noun` says what
 * the kind is ("content block", "output item", …). The kind is the upstream's string, so it
 * is used as a field name only when it reads as one (bounded, no spaces or quotes).
 */
export function warnDroppedUpstream(warnings: IrWarning[], kind: unknown, noun: string): void {
  // An upstream (a customer's own api_base among them) could invent kinds without end: past
  // MAX_NAMED_DROPS they are one "unknown", so the list and its de-duplication stay bounded.
  const named = typeof kind === "string" && FIELD_NAME.test(kind) && countDropped(warnings) < MAX_NAMED_DROPS;
  const name = named ? (kind as string) : "unknown";
  const field = `output.${name}`;
  for (const existing of warnings) if (existing.code === "dropped_content" && existing.field === field) return;
  warnings.push({ code: "dropped_content", field, message: `the upstream's "${name}" ${noun} has no place in the answer; dropped` });
}

const FIELD_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** The most distinct kinds of dropped upstream output one answer names. */
const MAX_NAMED_DROPS = 16;

function countDropped(warnings: readonly IrWarning[]): number {
  let count = 0;
  for (const warning of warnings) if (warning.code === "dropped_content") count++;
  return count;
}

/**
 * Adds `warning` unless one with the same code and field is there: a long stream that
 * drops the same kind of output many times reports it once.
 */
export function warnOnce(warnings: IrWarning[], warning: IrWarning): void {
  for (const existing of warnings) if (existing.code === warning.code && existing.field === warning.field) return;
  warnings.push(warning);
}
