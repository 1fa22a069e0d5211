import type { IrWarning } from "../../ir";
import { isRecord } from "../openai-shared/read-fields";
import { warnDroppedUpstream } from "../shared/output-warnings";

/** One run of answer text or reasoning, in the order the upstream wrote it. */
export interface AnswerPiece {
  kind: "text" | "reasoning";
  text: string;
}

/**
 * An answer's `content` (a whole message's or a stream delta's) as the vendors send it: a
 * string, or an array of typed parts. Mistral's reasoning models answer with arrays
 * (docs.mistral.ai/capabilities/reasoning; recorded from magistral-medium-2507 and
 * mistral-large-4):
 *
 *   [{"type":"thinking","thinking":[{"type":"text","text":"…"}],"closed":true},
 *    {"type":"text","text":"2 + 2 = 4"}]
 *
 * `text` parts (and untyped parts with a `text`) are text; a `thinking` part's text parts
 * (or a string `thinking`) are reasoning. Any other typed part, at either level, has no
 * place in the IR: it is dropped and named in `warnings` (`dropped_content`,
 * `output.<type>`), once per type per answer.
 */
export function readAnswerContent(content: unknown, warnings: IrWarning[]): AnswerPiece[] {
  if (typeof content === "string") return content === "" ? [] : [{ kind: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const pieces: AnswerPiece[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === "thinking") readThinking(part.thinking, pieces, warnings);
    else if (part.type === "text" || part.type === undefined) {
      if (typeof part.text === "string") push(pieces, "text", part.text);
    } else dropPart(part.type, warnings);
  }
  return pieces;
}

function readThinking(thinking: unknown, pieces: AnswerPiece[], warnings: IrWarning[]): void {
  if (typeof thinking === "string") return push(pieces, "reasoning", thinking);
  if (!Array.isArray(thinking)) return;
  for (const part of thinking) {
    if (!isRecord(part)) continue;
    if (part.type === "text" || part.type === undefined) {
      if (typeof part.text === "string") push(pieces, "reasoning", part.text);
    } else dropPart(part.type, warnings);
  }
}

/** Adjacent runs of one kind are one piece. */
function push(pieces: AnswerPiece[], kind: AnswerPiece["kind"], text: string): void {
  if (text === "") return;
  const last = pieces[pieces.length - 1];
  if (last !== undefined && last.kind === kind) last.text += text;
  else pieces.push({ kind, text });
}

/**
 * What a message (or a stream delta) carries beside its content that the IR has no place
 * for, named in `warnings`: `annotations` (the `url_citation`s of OpenAI's search models,
 * platform.openai.com/docs/api-reference/chat/object) and Groq's `executed_tools` (the
 * searches and code runs of its compound models, console.groq.com/docs/compound). An empty
 * list (OpenAI sends `annotations: []` on every message) drops nothing.
 */
export function warnDroppedMessageFields(message: Record<string, unknown>, warnings: IrWarning[]): void {
  if (Array.isArray(message.annotations) && message.annotations.length > 0) warnDroppedUpstream(warnings, "annotations", "on the message");
  if (Array.isArray(message.executed_tools) && message.executed_tools.length > 0) warnDroppedUpstream(warnings, "executed_tools", "of the message");
}

function dropPart(type: unknown, warnings: IrWarning[]): void {
  warnDroppedUpstream(warnings, type, "content part");
}
