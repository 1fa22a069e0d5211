import type { IrCitation, IrWarning } from "../../ir";
import { isRecord } from "../openai-shared/read-fields";
import { placeCitation, readUrlCitations } from "../openai-shared/url-citation";
import { warnDroppedUpstream } from "../shared/output-warnings";

/** One run of answer text or reasoning, in the order the upstream wrote it. */
export interface AnswerPiece {
  kind: "text" | "reasoning";
  text: string;
  /** On a text piece: the message's citations that fall in it (attachCitations). */
  citations?: IrCitation[];
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
 * A message's (or a stream delta's) `annotations`: the `url_citation`s of OpenAI's search
 * models (platform.openai.com/docs/api-reference/chat/object), indexed into the message's
 * text, are returned; an annotation of any other type is named in `warnings`. An empty list
 * (OpenAI sends `annotations: []` on every message) returns and names nothing.
 */
export function readAnnotations(message: Record<string, unknown>, warnings: IrWarning[]): IrCitation[] {
  return readUrlCitations(message.annotations, warnings, "on the message");
}

/**
 * What a message (or a stream delta) carries beside its content that the IR has no place
 * for, named in `warnings`: Groq's `executed_tools` (the searches and code runs of its
 * compound models, console.groq.com/docs/compound), whose results are one text blob per
 * tool, not pages a client could list.
 */
export function warnDroppedMessageFields(message: Record<string, unknown>, warnings: IrWarning[]): void {
  if (Array.isArray(message.executed_tools) && message.executed_tools.length > 0) warnDroppedUpstream(warnings, "executed_tools", "of the message");
}

/**
 * Puts each citation on the text piece its span starts in, with indices relative to that
 * piece: the annotations index the message's text, which a content array may split into
 * several text pieces around reasoning. A citation without a span goes on the last piece;
 * with no text to cite, the annotations are named in `warnings`.
 */
export function attachCitations(pieces: AnswerPiece[], citations: readonly IrCitation[], warnings: IrWarning[]): void {
  if (citations.length === 0) return;
  const texts = pieces.filter((piece) => piece.kind === "text");
  const last = texts[texts.length - 1];
  if (last === undefined) return warnDroppedUpstream(warnings, "annotations", "on the message");
  for (const citation of citations) {
    if (citation.start === undefined) {
      (last.citations ??= []).push(citation);
      continue;
    }
    let offset = 0;
    for (const piece of texts) {
      if (citation.start < offset + piece.text.length || piece === last) {
        (piece.citations ??= []).push(placeCitation(citation, -offset, piece.text.length));
        break;
      }
      offset += piece.text.length;
    }
  }
}

function dropPart(type: unknown, warnings: IrWarning[]): void {
  warnDroppedUpstream(warnings, type, "content part");
}
