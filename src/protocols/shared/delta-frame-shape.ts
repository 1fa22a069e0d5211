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
 * it still fit. `per: "stream"`: a field the decoder does not read once the stream has
 * started whose value changes only from one stream to the next (a completion's id): open
 * in the shapes kept for other streams (KnownShapes), fixed text in a stream's own.
 */
export interface IgnoredField {
  key: string;
  value: "integer" | "string";
  per?: "frame" | "stream";
}

/** What fills an open place of a shape: the delta's text, or an ignored field's value (per stream: see IgnoredField). */
type Slot = "text" | IgnoredField["value"] | "stream integer" | "stream string";

/** A proven shape: fixed text around its open places, what fills each, and the part a fitting frame gives. */
interface Shape {
  /** The fixed text between the open places, one more than `slots`. */
  readonly fixed: readonly string[];
  readonly slots: readonly Slot[];
  readonly eventName: string | undefined;
  /** The part the learned frame gave: a fitting frame gives it with that frame's string. */
  readonly part: DeltaPart;
}

/** Shapes a KnownShapes keeps by default: a few models' and providers' text and reasoning frames. */
const MAX_KNOWN_SHAPES = 16;
/**
 * The most fixed text of a shape a KnownShapes keeps: a text chunk's is a few hundred
 * characters, and an upstream's frame may be megabytes (its logprobs, say), which a
 * process-wide store must not hold.
 */
const MAX_KNOWN_SHAPE_CHARS = 4_096;

/**
 * Shapes proven in earlier streams, shared by every decoder of one protocol, so that a
 * stream's first delta frame of a known shape is read without parsing it, and nothing is
 * learned: learning (a second parse, a walk of both values) costs more than it saves on a
 * short answer (test/bench/HISTORY.md, 2026-11-29 18:12–19:25). A shape's proof holds for any
 * frame that fits it, whichever stream it comes from; only the decoder's state decides
 * whether the part it gives is the decoder's answer, so a decoder asks for known shapes
 * only where a text or reasoning delta changes nothing in its state (`match`'s `known`).
 * Argument text is never kept: its part depends on which tool calls the stream opened.
 * Bounded: the newest MAX_KNOWN_SHAPES, of MAX_KNOWN_SHAPE_CHARS each at most; a stream of
 * ever-new shapes (a hostile upstream) only pushes out older ones, and every stream still
 * learns its own. A shape's fixed text is only ever compared, never sent anywhere: what a
 * fitting frame gives is that frame's own text.
 */
export class KnownShapes {
  private shapes: Shape[] = [];

  constructor(private readonly max = MAX_KNOWN_SHAPES) {}

  remember(shape: Shape): void {
    if (shape.part.type === "tool_call_delta") return;
    if (shape.fixed.reduce((chars, text) => chars + text.length, 0) > MAX_KNOWN_SHAPE_CHARS) return;
    if (this.shapes.some((known) => sameShape(known, shape))) return;
    this.shapes = [shape, ...this.shapes.slice(0, this.max - 1)];
  }

  /**
   * The first known shape `event` fits, made the stream's own (its per-stream values fixed
   * to this frame's), and the part it stands for.
   */
  fitting(event: SseEvent): { shape: Shape; part: DeltaPart } | undefined {
    for (const shape of this.shapes) {
      const part = fit(shape, event, fitted);
      if (part !== undefined) return { shape: closed(shape, event.data, fitted), part };
    }
    return undefined;
  }

  /** Shapes kept (tests). */
  get size(): number {
    return this.shapes.length;
  }
}

function sameShape(a: Shape, b: Shape): boolean {
  return a.eventName === b.eventName && a.part.type === b.part.type && a.fixed.length === b.fixed.length && a.fixed.every((text, i) => text === b.fixed[i] && (i === a.slots.length || a.slots[i] === b.slots[i]));
}

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
 * field stays open only where its key occurs once (elsewhere its value is fixed text).
 * match() takes only well-formed literals and integers
 * (anything else is parsed as before, and fails as before). A decoder uses it only where
 * such a frame changes nothing in its state but what the part itself tells (the text
 * position), and forgets the shape whenever it parses a frame itself. An empty string
 * (which decoders drop) is never matched. Frames whose other fields change every time
 * never fit; after MAX_UNUSED_SHAPES such shapes the stream stops learning, so they cost a
 * comparison more than before, not a parse. With `known` (KnownShapes), text and reasoning
 * shapes proven by earlier streams are tried before learning.
 */
export class DeltaFrameShape {
  private shape: Shape | undefined;
  /** The current shape has fitted a frame since it was learned. */
  private used = false;
  private unused = 0;
  /** The stream has learned or adopted a shape. */
  private hadShape = false;

  /** `ignored`: fields the decoder never reads, at any depth. `known`: shapes shared with the protocol's other decoders. */
  constructor(
    private readonly ignored: readonly IgnoredField[] = [],
    private readonly known?: KnownShapes,
  ) {}

  /**
   * The part `event` stands for when it has the learned shape, else undefined (parse it).
   * `known`: the decoder's state is one where a text or reasoning delta changes nothing but
   * the text position, so a shape known from other streams may stand for it too.
   */
  match(event: SseEvent, known = false): DeltaPart | undefined {
    if (this.shape !== undefined) {
      const part = fit(this.shape, event);
      if (part !== undefined) this.used = true;
      return part;
    }
    // Known shapes are asked until the stream has a shape of its own: after that it learns
    // its next ones, and a frame no shape fits (a finish, a tool call) costs no lookups.
    if (!known || this.known === undefined || this.hadShape) return undefined;
    const found = this.known.fitting(event);
    if (found === undefined) return undefined;
    this.shape = found.shape;
    this.hadShape = true;
    this.used = true;
    return found.part;
  }

  /**
   * `event` (the frame a decoder just parsed, to `parsed`) gave exactly `part`, whose string
   * was read from one of its fields. `known`: the frame changed nothing in the decoder's
   * state but the text position, in any state where `match` is told `known`, so its shape
   * may stand for frames of other streams (a refusal's text, which marks the answer refused,
   * may not).
   */
  learn(event: SseEvent, parsed: unknown, part: DeltaPart, known = false): void {
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
      // Absent, or more than once (a tool call's own id beside the chunk's): its value stays fixed text.
      if (keyAt === -1 || data.indexOf(key, keyAt + 1) !== -1) continue;
      const start = keyAt + key.length;
      const end = field.value === "integer" ? integerEnd(data, start) : literalEnd(data, start);
      // Another kind of value (null, say) stays fixed: a frame with a different one does not fit.
      if (end === -1 || (start < at + literal.length && end > at)) continue;
      places.push({ start, end, slot: field.per === "stream" ? `stream ${field.value}` : field.value });
    }
    places.sort((a, b) => a.start - b.start);
    if (!provesOneField(parsed, data.slice(0, at) + JSON.stringify(PROBE) + data.slice(at + literal.length), text)) return;
    const fixed: string[] = [];
    const slots: Slot[] = [];
    const bounds: number[] = [];
    let from = 0;
    for (const place of places) {
      fixed.push(data.slice(from, place.start));
      slots.push(place.slot);
      bounds.push(place.start, place.end);
      from = place.end;
    }
    fixed.push(data.slice(from));
    const shape: Shape = { fixed, slots, eventName: event.event, part };
    // Known shapes are asked only for a stream's first: its later ones are not worth keeping.
    if (known && !this.hadShape) this.known?.remember(shape);
    this.shape = closed(shape, data, bounds);
    this.hadShape = true;
  }

  /** The decoder parsed a frame itself: its state may have moved in ways a shape does not capture. */
  forget(): void {
    if (this.shape !== undefined && !this.used) this.unused++;
    this.shape = undefined;
    this.used = false;
  }
}

/** Where fit() found each open place of the last frame it was asked about: start and end, slot by slot. */
const fitted: number[] = [];

/**
 * The part `event` stands for when it fits `shape`, else undefined. `bounds`, when given,
 * gets where each open place lies in the frame (start and end, slot by slot).
 */
function fit(shape: Shape, event: SseEvent, bounds?: number[]): DeltaPart | undefined {
  if (event.event !== shape.eventName) return undefined;
  const { fixed, slots } = shape;
  const data = event.data;
  const last = fixed[slots.length]!;
  // The end first: a native comparison that turns away most other kinds of frame at once.
  if (!data.endsWith(last)) return undefined;
  if (bounds !== undefined) bounds.length = 0;
  let text: string | undefined;
  let at = 0;
  for (let i = 0; i < slots.length; i++) {
    if (!data.startsWith(fixed[i]!, at)) return undefined;
    at += fixed[i]!.length;
    const slot = slots[i]!;
    const end = slot === "integer" || slot === "stream integer" ? integerEnd(data, at) : literalEnd(data, at);
    if (end === -1) return undefined;
    if (slot === "text") text = literalEscaped ? literalValue(data, at, end) : data.slice(at + 1, end - 1);
    else if ((slot === "string" || slot === "stream string") && literalEscaped && literalValue(data, at, end) === undefined) return undefined;
    bounds?.push(at, end);
    at = end;
  }
  if (data.length - at !== last.length || text === undefined || text === "") return undefined;
  return withString(shape.part, text);
}

/** `shape` with its per-stream places fixed to their values in `data` (found at `bounds`): a stream's own shape. */
function closed(shape: Shape, data: string, bounds: readonly number[]): Shape {
  if (!shape.slots.some((slot) => slot === "stream integer" || slot === "stream string")) return shape;
  const fixed: string[] = [];
  const slots: Slot[] = [];
  let text = shape.fixed[0]!;
  for (let i = 0; i < shape.slots.length; i++) {
    const slot = shape.slots[i]!;
    if (slot === "stream integer" || slot === "stream string") {
      text += data.slice(bounds[2 * i]!, bounds[2 * i + 1]!) + shape.fixed[i + 1]!;
      continue;
    }
    fixed.push(text);
    slots.push(slot);
    text = shape.fixed[i + 1]!;
  }
  fixed.push(text);
  return { fixed, slots, eventName: shape.eventName, part: shape.part };
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
  literalEscaped = false;
  if (data.charCodeAt(start) !== 34) return -1;
  // A delta's text is a few characters: one pass over them costs less than native searches.
  for (let at = start + 1; at < data.length; at++) {
    const code = data.charCodeAt(at);
    if (code === 34) return at + 1;
    if (code === 92) {
      literalEscaped = true;
      at++;
    } else if (code < 32) return -1;
  }
  return -1;
}

/** Whether the literal literalEnd last found has an escape in it (else its text is what lies between its quotes). */
let literalEscaped = false;

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
