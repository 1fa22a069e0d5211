import type { IrContentPart, IrMessage } from "../../ir";

/**
 * One wire turn's decoded parts as IR messages, for the wires that put tool results
 * inside a turn (Anthropic `tool_result` blocks, Gemini `functionResponse` parts): each
 * result becomes a role "tool" message of its own, in its place, and the parts around it
 * stay together under the turn's role.
 */
export function splitToolResults(role: IrMessage["role"], parts: IrContentPart[]): IrMessage[] {
  const messages: IrMessage[] = [];
  let pending: IrContentPart[] = [];
  const flush = () => {
    if (pending.length > 0) messages.push({ role, content: pending });
    pending = [];
  };
  for (const part of parts) {
    if (part.type === "tool_result") {
      flush();
      messages.push({ role: "tool", content: [part] });
    } else pending.push(part);
  }
  flush();
  return messages;
}
