import type { IrStreamPart } from "../../ir";

/**
 * Where a stream decoder stands in the IR's current text part: the text deltas since the
 * last part of another kind (ir-stream.ts). A stream citation's span indexes that part, while
 * upstreams index something else (a message, one content part, a candidate's whole text), so
 * a decoder notes what it emits here and shifts the upstream's indices by where that text
 * began. `epoch` changes whenever a part of another kind ends the current text part, so a
 * position taken earlier can be told apart from one in the current part.
 */
export class TextPartCursor {
  private length = 0;
  private epoch = 0;

  /** Counts the parts the decoder emitted, in order (each part once). */
  note(parts: readonly IrStreamPart[]): void {
    const position = this.positionWith(parts);
    this.length = position.length;
    this.epoch = position.epoch;
  }

  /** The position after the parts noted so far and then `pending` (emitted, not yet noted). */
  positionWith(pending: readonly IrStreamPart[] = []): TextPosition {
    let { length, epoch } = this;
    for (const part of pending) {
      if (part.type === "text_delta") length += part.text.length;
      else if (ENDS_TEXT_PART.has(part.type)) {
        epoch++;
        length = 0;
      }
    }
    return { length, epoch };
  }
}

export interface TextPosition {
  /** JavaScript string length of the current text part so far. */
  length: number;
  epoch: number;
}

/** The parts of another kind that end a text part; start, citations, usage and finish do not. */
const ENDS_TEXT_PART: ReadonlySet<IrStreamPart["type"]> = new Set([
  "reasoning_delta",
  "reasoning_signature",
  "redacted_reasoning",
  "tool_call_start",
  "tool_call_delta",
  "tool_call_end",
  "web_search",
]);
