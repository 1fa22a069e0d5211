import type { IrStreamPart } from "../../ir";
import type { SseEvent } from "../../ir/sse-event";

/** The stream parts a frame shape can stand for: those that carry one string (text, reasoning, a tool call's argument text). */
export type DeltaPart = Extract<IrStreamPart, { type: "text_delta" | "reasoning_delta" | "tool_call_delta" }>;

/** Whether `part` is one a shape can stand for. */
export function isDeltaPart(part: IrStreamPart | undefined): part is DeltaPart {
  return part !== undefined && (part.type === "text_delta" || part.type === "reasoning_delta" || part.type === "tool_call_delta");
}

function stringOf(part: DeltaPart): string {
  return part.type === "tool_call_delta" ? part.argumentsDelta : part.text;
}

/** `part` with another string. */
function withString(part: DeltaPart, text: string): DeltaPart {
  return part.type === "tool_call_delta" ? { type: "tool_call_delta", index: part.index, argumentsDelta: text } : { type: part.type, text };
}

/** Stand-in text that learn() puts where the delta's text was, to prove that the text is one field. */
const PROBE = "\u0001probe\u0001";

/** Learned shapes that the very next frame did not fit, after which a stream stops learning. */
const MAX_UNUSED_SHAPES = 2;

/**
 * A field a decoder never reads whose value changes from frame to frame (a sequence number,
 * OpenAI's `obfuscation` padding): a shape leaves its value open, so frames that differ in
 * it still fit.
 */
export interface IgnoredField {
  key: string;
  value: "integer" | "string";
}

/** What fills an open place of a shape: the delta's text, or an ignored field's value. */
type Slot = "text" | IgnoredField["value"];

/**
 * The shape of a stream's last delta frame, so that the next frames of that shape are read
 * without parsing them. A streamed answer is mostly frames that differ from the one before
 * only in their text (`{"id":"…","choices":[{"index":0,"delta":{"content":"<text>"}…}]}`);
 * parsing each whole costs most of what accounting for a same-protocol stream costs
 * (test/bench/HISTORY.md). After a decoder has parsed a frame that gave exactly one delta
 * (text, reasoning, or a tool call's argument text: DeltaPart) whose string it read from
 * one field of that frame, it hands the frame and the part to learn(): the frame is cut
 * into fixed text around the string's JSON literal (and around the values of the
 * decoder's ignored fields). A later frame that is that fixed text around a JSON string
 * literal (and values of the same kinds) is the same JSON with only those values changed,
 * so the decoder's answer for it is the same part with the new string; match() returns it.
 *
 * Exact, not a heuristic: learn() keeps a shape only when the string's literal occurs once
 * in the frame, and the frame with a probe in its place parses to the same value except
 * for that one string leaf, which must be the only leaf holding the string; an ignored
 * field's key must occur once. match() takes only well-formed literals and integers
 * (anything else is parsed as before, and fails as before). A decoder uses it only where
 * such a frame changes nothing in its state but what the part itself tells (the text
 * position), and forgets the shape whenever it parses a frame itself. An empty string
 * (which decoders drop) is never matched. Frames whose other fields change every time
 * never fit; after MAX_UNUSED_SHAPES such shapes the stream stops learning, so they cost a
 * comparison more than before, not a parse.
 */
export class DeltaFrameShape {
  /** The fixed text between the open places, one more than `slots`; empty: no shape. */
  private fixed: string[] = [];
  private slots: Slot[] = [];
  private eventName: string | undefined;
  /** The part the learned frame gave: a fitting frame gives it with that frame's string. */
  private part: DeltaPart | undefined;
  /** The current shape has fitted a frame since it was learned. */
  private used = false;
  private unused = 0;

  /** `ignored`: fields the decoder never reads, at any depth. */
  constructor(private readonly ignored: readonly IgnoredField[] = []) {}

  /** The part `event` stands for when it has the learned shape, else undefined (parse it). */
  match(event: SseEvent): DeltaPart | undefined {
    const fixed = this.fixed;
    if (fixed.length === 0 || event.event !== this.eventName) return undefined;
    const data = event.data;
    const slots = this.slots;
    let text: string | undefined;
    let at = 0;
    for (let i = 0; i < slots.length; i++) {
      if (!data.startsWith(fixed[i]!, at)) return undefined;
      at += fixed[i]!.length;
      const slot = slots[i]!;
      const end = slot === "integer" ? integerEnd(data, at) : literalEnd(data, at);
      if (end === -1) return undefined;
      if (slot === "text") text = literalValue(data, at, end);
      else if (slot === "string" && literalValue(data, at, end) === undefined) return undefined;
      at = end;
    }
    const last = fixed[slots.length]!;
    if (data.length - at !== last.length || !data.endsWith(last) || text === undefined || text === "") return undefined;
    this.used = true;
    return withString(this.part!, text);
  }

  /**
   * `event` (the frame a decoder just parsed, to `parsed`) gave exactly `part`, whose string
   * was read from one of its fields.
   */
  learn(event: SseEvent, parsed: unknown, part: DeltaPart): void {
    this.forget();
    const text = stringOf(part);
    if (this.unused >= MAX_UNUSED_SHAPES || text === "") return;
    const data = event.data;
    const literal = JSON.stringify(text);
    const at = data.indexOf(literal);
    if (at === -1 || data.indexOf(literal, at + 1) !== -1) return;
    const places: { start: number; end: number; slot: Slot }[] = [{ start: at, end: at + literal.length, slot: "text" }];
    for (const field of this.ignored) {
      const key = `"${field.key}":`;
      const keyAt = data.indexOf(key);
      if (keyAt === -1) continue;
      if (data.indexOf(key, keyAt + 1) !== -1) return;
      const start = keyAt + key.length;
      const end = field.value === "integer" ? integerEnd(data, start) : literalEnd(data, start);
      // Another kind of value (null, say) stays fixed: a frame with a different one does not fit.
      if (end === -1 || (start < at + literal.length && end > at)) continue;
      places.push({ start, end, slot: field.value });
    }
    places.sort((a, b) => a.start - b.start);
    if (!provesOneField(parsed, data.slice(0, at) + JSON.stringify(PROBE) + data.slice(at + literal.length), text)) return;
    let from = 0;
    for (const place of places) {
      this.fixed.push(data.slice(from, place.start));
      this.slots.push(place.slot);
      from = place.end;
    }
    this.fixed.push(data.slice(from));
    this.eventName = event.event;
    this.part = part;
  }

  /** The decoder parsed a frame itself: its state may have moved in ways a shape does not capture. */
  forget(): void {
    if (this.fixed.length > 0 && !this.used) this.unused++;
    this.fixed = [];
    this.slots = [];
    this.used = false;
  }
}

/** Where the JSON integer (no sign, fraction or exponent) at data[start] ends, or -1. */
function integerEnd(data: string, start: number): number {
  let at = start;
  while (at < data.length) {
    const code = data.charCodeAt(at);
    if (code < 48 || code > 57) break;
    at++;
  }
  if (at === start || (at - start > 1 && data.charCodeAt(start) === 48)) return -1;
  return at;
}

/**
 * Where the JSON string literal at data[start] ends (past its closing quote), or -1: not a
 * quote there, a control character inside, or no closing quote. Escapes are skipped here
 * and checked by literalValue.
 */
function literalEnd(data: string, start: number): number {
  if (data.charCodeAt(start) !== 34) return -1;
  // A delta's text is a few characters: one pass over them costs less than native searches.
  for (let at = start + 1; at < data.length; at++) {
    const code = data.charCodeAt(at);
    if (code === 34) return at + 1;
    if (code === 92) at++;
    else if (code < 32) return -1;
  }
  return -1;
}

/** The string the literal data[start, end) spells, or undefined when an escape in it is bad. */
function literalValue(data: string, start: number, end: number): string | undefined {
  const inner = data.slice(start + 1, end - 1);
  if (!inner.includes("\\")) return inner;
  try {
    const value: unknown = JSON.parse(data.slice(start, end));
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `probed` parses to `original` (the frame as parsed) with exactly one string leaf
 * changed from `text` to PROBE, and that leaf is the only one in `original` holding `text`.
 */
function provesOneField(original: unknown, probed: string, text: string): boolean {
  let probe: unknown;
  try {
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
