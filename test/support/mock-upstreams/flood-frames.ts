/**
 * Kind "flood": a long answer sent as fast as the reader takes it, for backpressure tests.
 * The turn is rendered once with two text pieces of FLOOD_PIECE; its first text delta
 * frame is then repeated `repeat` times, lazily, so the mock never holds the whole body.
 * Responses sequence numbers are renumbered to stay consecutive. The closing frames
 * (Responses' `output_text.done`, usage) still describe the two-piece turn: a client of
 * a flood is only ever expected to read part of it.
 */

/** One 1,000-character word: a single text delta on every wire. */
export const FLOOD_PIECE = "flood".repeat(200);
export const FLOOD_TEXT = `${FLOOD_PIECE} ${FLOOD_PIECE}`;
export const DEFAULT_FLOOD_FRAMES = 10_000;

export function* floodFrames(frames: readonly string[], repeat: number): Generator<string> {
  const at = frames.findIndex((frame) => frame.includes(FLOOD_PIECE));
  if (at === -1) throw new Error("a flood turn has no text delta to repeat");
  for (let index = 0; index < at; index++) yield frames[index]!;
  for (let copy = 0; copy < repeat; copy++) yield renumber(frames[at]!, copy);
  for (let index = at + 1; index < frames.length; index++) yield renumber(frames[index]!, repeat - 1);
}

function renumber(frame: string, offset: number): string {
  if (offset === 0) return frame;
  return frame.replace(/"sequence_number":(\d+)/, (_, n: string) => `"sequence_number":${Number(n) + offset}`);
}
