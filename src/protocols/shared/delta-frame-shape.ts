import type { SseEvent } from "../../ir/sse-event";

/** The text-bearing stream parts a frame shape can stand for. */
export type DeltaKind = "text_delta" | "reasoning_delta";

/** Stand-in text that learn() puts where the delta's text was, to prove that the text is one field. */
const PROBE = "\u0001probe\u0001";

/** Learned shapes that the very next frame did not fit, after which a stream stops learning. */
const MAX_UNUSED_SHAPES = 2;

/**
 * The shape of a stream's last delta frame, so that the next frames of that shape are read
 * without parsing them. A streamed answer is mostly frames that differ from the one before
 * only in their text (`{"id":"…","choices":[{"index":0,"delta":{"content":"<text>"}…}]}`);
 * parsing each whole costs most of what relaying a same-protocol stream costs
 * (test/bench/HISTORY.md). After a decoder has parsed a frame that gave exactly one text or
 * reasoning delta, it hands the frame and the text to learn(): the frame is cut into what
 * precedes the text's JSON literal and what follows it. A later frame that is that prefix,
 * a JSON string literal and that suffix is the same JSON with only that string changed, so
 * the decoder's answer for it is the same part with the new text; match() returns the text.
 *
 * Exact, not a heuristic: learn() keeps a shape only when the literal occurs once in the
 * frame and the frame with a probe in its place parses to the same value except for that
 * one string leaf, which must be the only leaf holding the text; match() takes only a
 * well-formed literal (anything else is parsed as before, and fails as before). A decoder
 * uses it only where its state after a delta of that kind is the state before plus the
 * text, and forgets the shape whenever it parses a frame itself. An empty text (which
 * decoders drop) is never matched. Frames whose other fields change every time (a
 * sequence number, OpenAI's `obfuscation`) never fit; after MAX_UNUSED_SHAPES such shapes
 * the stream stops learning, so they cost one comparison more than before, not a parse.
 */
export class DeltaFrameShape {
  private prefix: string | undefined;
  private suffix = "";
  private eventName: string | undefined;
  private kind: DeltaKind = "text_delta";
  /** The current shape has fitted a frame since it was learned. */
  private used = false;
  private unused = 0;

  /** The part `event` stands for when it has the learned shape, else undefined (parse it). */
  match(event: SseEvent): { type: DeltaKind; text: string } | undefined {
    const prefix = this.prefix;
    if (prefix === undefined || event.event !== this.eventName) return undefined;
    const data = event.data;
    const suffix = this.suffix;
    const end = data.length - suffix.length;
    // The shortest literal that is not dropped is one character between quotes.
    if (end - prefix.length < 3 || !data.startsWith(prefix) || !data.endsWith(suffix)) return undefined;
    const text = stringLiteral(data, prefix.length, end);
    if (text === undefined || text === "") return undefined;
    this.used = true;
    return { type: this.kind, text };
  }

  /** `data` (the frame a decoder just parsed) gave exactly one delta of `kind` with `text`. */
  learn(event: SseEvent, kind: DeltaKind, text: string): void {
    this.forget();
    if (this.unused >= MAX_UNUSED_SHAPES || text === "") return;
    const data = event.data;
    const literal = JSON.stringify(text);
    const at = data.indexOf(literal);
    if (at === -1 || data.indexOf(literal, at + 1) !== -1) return;
    const prefix = data.slice(0, at);
    const suffix = data.slice(at + literal.length);
    if (!provesOneField(data, prefix + JSON.stringify(PROBE) + suffix, text)) return;
    this.prefix = prefix;
    this.suffix = suffix;
    this.eventName = event.event;
    this.kind = kind;
  }

  /** The decoder parsed a frame itself: its state may have moved in ways a shape does not capture. */
  forget(): void {
    if (this.prefix !== undefined && !this.used) this.unused++;
    this.prefix = undefined;
    this.used = false;
  }
}

/**
 * The string that data[start, end) spells as one JSON string literal, or undefined when
 * it is not exactly one (an unescaped quote or a control character inside, a bad escape).
 */
function stringLiteral(data: string, start: number, end: number): string | undefined {
  if (data.charCodeAt(start) !== 34 || data.charCodeAt(end - 1) !== 34) return undefined;
  // A delta's text is a few characters: one pass over them costs less than three searches.
  for (let i = start + 1; i < end - 1; i++) {
    const code = data.charCodeAt(i);
    if (code === 92) return escapedLiteral(data.slice(start, end));
    if (code === 34 || code < 32) return undefined;
  }
  return data.slice(start + 1, end - 1);
}

/** A literal with escapes, read by JSON.parse, which also refuses a bad one. */
function escapedLiteral(literal: string): string | undefined {
  try {
    const value: unknown = JSON.parse(literal);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `probed` parses to the value `data` parses to with exactly one string leaf
 * changed from `text` to PROBE, and that leaf is the only one in `data` holding `text`.
 */
function provesOneField(data: string, probed: string, text: string): boolean {
  let original: unknown;
  let probe: unknown;
  try {
    original = JSON.parse(data);
    probe = JSON.parse(probed);
  } catch {
    return false;
  }
  const tally = { changed: 0, holding: 0 };
  return sameBut(original, probe, text, tally) && tally.changed === 1 && tally.holding === 1;
}

function sameBut(a: unknown, b: unknown, text: string, tally: { changed: number; holding: number }): boolean {
  if (typeof a === "string") {
    if (a === text) tally.holding++;
    if (a === b) return true;
    if (a === text && b === PROBE) return ++tally.changed === 1;
    return false;
  }
  if (a === null || typeof a !== "object") return a === b;
  if (b === null || typeof b !== "object" || Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  for (let i = 0; i < aKeys.length; i++) {
    const key = aKeys[i]!;
    if (bKeys[i] !== key) return false;
    if (!sameBut((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], text, tally)) return false;
  }
  return true;
}
