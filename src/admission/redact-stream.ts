import type { PolicySource } from "../policy/effective-policy";
import { permissionDenied, type Refusal } from "./admission-check";
import { scanStep, type CandidateMemo, type PatternSet } from "./content-scanner";

/** What replaces each match of a `redact` pattern in an answer. */
export const REDACTED = "[REDACTED]";

/** What the relay passes on after a piece of answer text: the text to send now, and a refusal when a `block` pattern matched. */
export interface RedactedText {
  text: string;
  /** The answer must end here with the protocol's error (a `block` pattern matched); `text` is what precedes the match. */
  refusal?: Refusal;
}

/**
 * Response-side content patterns over one run of streamed text (a text block, or a
 * reasoning block): `redact` replaces each match with [REDACTED], a match split across
 * chunks included; `block` ends the answer. Text is passed on as soon as no match can
 * still start in it: before the first position where a pattern's fixed prefix could
 * start, nothing is held; from there on, the longest match of the patterns plus one
 * character when they are bounded, else up to WINDOW_CHARS (512) characters, until the
 * scanner can decide (content-scanner.ts). The output equals `redactText` of the whole
 * run, wherever the chunks were cut. Call `end()` when the run ends (the block closes,
 * a tool call starts, the answer finishes) to flush what is held.
 */
export class StreamRedactor {
  /** One character of already-passed text (context for `\b`), then the held text. */
  private held = "";
  private contextChars = 0;
  private blocked = false;

  constructor(private readonly patterns: PatternSet) {}

  /** Text held back so far, waiting for the scanner to decide. */
  get heldChars(): number {
    return this.held.length - this.contextChars;
  }

  push(delta: string): RedactedText {
    if (this.blocked) return { text: "" };
    this.held += delta;
    return this.drain(false);
  }

  end(): RedactedText {
    if (this.blocked) return { text: "" };
    const result = this.drain(true);
    this.held = "";
    this.contextChars = 0;
    return result;
  }

  private drain(complete: boolean): RedactedText {
    let out = "";
    let pos = this.contextChars;
    const text = this.held;
    const memo: CandidateMemo = [];
    for (;;) {
      const step = scanStep(this.patterns, text, pos, complete, memo);
      if (step.kind === "need_more") break;
      if (step.kind === "clear") {
        out += text.slice(pos, step.until);
        pos = step.until;
        if (pos >= text.length) break;
        continue;
      }
      out += text.slice(pos, step.start);
      if (step.clause.action === "block") {
        this.blocked = true;
        this.held = "";
        return { text: out, refusal: blockedAnswer(step.clause.source, step.clause.spec.name) };
      }
      out += REDACTED;
      pos = step.end;
    }
    // Keep one character before the held text as context for the next decision.
    const keepFrom = pos > 0 ? pos - 1 : 0;
    this.held = text.slice(keepFrom);
    this.contextChars = pos - keepFrom;
    return { text: out };
  }
}

/** The same as one StreamRedactor over the whole text: for answers that are not streamed. */
export function redactText(patterns: PatternSet, text: string): RedactedText {
  const redactor = new StreamRedactor(patterns);
  const first = redactor.push(text);
  if (first.refusal) return first;
  const last = redactor.end();
  return last.refusal ? { text: first.text + last.text, refusal: last.refusal } : { text: first.text + last.text };
}

function blockedAnswer(source: PolicySource, patternName: string): Refusal {
  return permissionDenied(source, `the answer was stopped by content pattern "${patternName}" of policy "${source.policyName}"`);
}
