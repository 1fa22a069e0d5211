import type { IrCitation, IrStreamPart, IrWarning } from "../../ir";
import { droppedOutput, warnOnce } from "./output-warnings";

/** A web citation placed on a span of the text a client gets, in that text's indices. */
export interface PlacedCitation {
  url: string;
  title?: string;
  start: number;
  end: number;
}

/**
 * The span of a text part of `length` code units that a citation supports: its own, kept
 * inside the part, or the whole part when it has none (a block-level citation).
 */
export function citationSpan(citation: IrCitation, length: number): { start: number; end: number } {
  const start = Math.min(Math.max(citation.start ?? 0, 0), length);
  const end = Math.min(Math.max(citation.end ?? length, start), length);
  return { start, end };
}

/**
 * A part's web citations on the client's text, where the part starts at `offset`; a citation
 * no web wire can carry (a request document's location, or one with no page) is reported.
 */
export function placeCitations(citations: readonly IrCitation[] | undefined, offset: number, partText: string, warnings: IrWarning[]): PlacedCitation[] {
  const placed: PlacedCitation[] = [];
  for (const citation of citations ?? []) {
    if (citation.url === undefined) {
      warnOnce(warnings, UNCARRIED_CITATION);
      continue;
    }
    const span = citationSpan(citation, partText.length);
    const entry: PlacedCitation = { url: citation.url, start: offset + span.start, end: offset + span.end };
    if (citation.title !== undefined) entry.title = citation.title;
    placed.push(entry);
  }
  return placed;
}

/**
 * A document citation locates a passage in a request document by the producing vendor's own
 * scheme (Anthropic's character, page and block locations), which only Messages carries.
 */
export const UNCARRIED_CITATION = droppedOutput("citations", "a citation of a request document (not a web page) has no place on this wire; not sent");

/** A stream's citation whose part never had text: there is no text to put it on. */
export const CITATION_WITHOUT_TEXT = droppedOutput("citations", "a citation with no text to annotate (its text part was empty, or had ended before it came); not sent");

/**
 * Whether a stream part ends the current text part (ir-stream.ts): any part of another kind,
 * the finish and an error. Usage and a citation do not: they arrive amid a part's text.
 */
export function endsTextPart(part: IrStreamPart): boolean {
  return part.type !== "text_delta" && part.type !== "citation" && part.type !== "usage" && part.type !== "start";
}

/**
 * The text part a stream encoder is writing and the citations it holds for it. `start` is
 * where the part begins in the text the encoder has written, in the encoder's own unit.
 * A citation is placed once the text it spans has arrived; one without a span, or whose
 * text has not all arrived, waits for the end of the part.
 */
export class CitedTextPart {
  start = 0;
  text = "";
  private active = false;
  private held: IrCitation[] = [];

  /** Text of the part; `at` is where the part starts if this text opens it. */
  addText(text: string, at: number): void {
    this.open(at);
    this.text += text;
  }

  /**
   * A citation of the part: returned when it can be placed now (by default: its span has
   * arrived; a wire may know better), otherwise held for `end()`.
   */
  cite(citation: IrCitation, at: number, placeable: (citation: IrCitation, text: string) => boolean = spanArrived): IrCitation | undefined {
    this.open(at);
    if (placeable(citation, this.text)) return citation;
    this.held.push(citation);
    return undefined;
  }

  /** Ends the part: the citations it still holds, to be placed over its whole text. */
  end(): IrCitation[] {
    this.active = false;
    return this.held.splice(0);
  }

  private open(at: number): void {
    if (this.active) return;
    this.active = true;
    this.start = at;
    this.text = "";
  }
}

function spanArrived(citation: IrCitation, text: string): boolean {
  return citation.start !== undefined && citation.end !== undefined && citation.end <= text.length;
}
