import type { IrContentPart, IrToolResultPart, IrWarning } from "../../ir";

/**
 * The result of the call `callId`. Most wires name only the call; the tool's name comes
 * from the earlier turn of the request that made it (`toolNames`: call id -> name),
 * which Gemini needs to send the result on.
 */
export function toolResultFor(callId: string, output: IrToolResultPart["output"], toolNames: ReadonlyMap<string, string>): IrToolResultPart {
  const result: IrToolResultPart = { type: "tool_result", callId, output };
  const toolName = toolNames.get(callId);
  if (toolName !== undefined) result.toolName = toolName;
  return result;
}

/** The parts a wire's tool result carries; the others are skipped with one warning at `field`. */
export function carriedParts<T extends IrContentPart>(
  parts: IrContentPart[],
  carried: (part: IrContentPart) => part is T,
  field: string,
  warnings: IrWarning[],
  message: string,
): T[] {
  const kept = parts.filter(carried);
  if (kept.length < parts.length) warnings.push({ code: "dropped_content", field, message });
  return kept;
}
