import { frameEndAfter, frameStartBefore } from "../sse";

/**
 * encodeRequest always asks a chat upstream for `stream_options.include_usage` (the bill
 * must not rest on an estimate). Relaying that stream as it is to a client that did not
 * ask would hand it a chunk it never requested: the usage-only chunk, `"choices":[]` with
 * a `usage` object. This removes such chunks from whole SSE frames; every other byte stays.
 *
 * Runs on every chunk of a same-protocol chat stream, so the common case (no such chunk)
 * is one native search, and a frame is cut out by searching for its blank lines rather
 * than splitting the text into frames.
 */
export function dropUnrequestedUsage(frames: string): string {
  let at = emptyChoicesAt(frames, 0);
  if (at === -1) return frames;
  let out = "";
  let from = 0;
  while (at !== -1) {
    const start = frameStartBefore(frames, at);
    const end = frameEndAfter(frames, at);
    const frame = frames.slice(start, end);
    if (frame.includes('"usage"')) {
      out += frames.slice(from, start);
      from = end;
    }
    at = emptyChoicesAt(frames, end);
  }
  return from === 0 ? frames : out + frames.slice(from);
}

/**
 * `frames.indexOf('"choices":[]', from)`, found by its tail: a search for text that begins
 * with a quote stops at every quote of the JSON (0.54 µs over 2 KB of frames, against 0.25
 * for `choices":[]` and a look at the character before).
 */
function emptyChoicesAt(frames: string, from: number): number {
  for (let at = frames.indexOf('choices":[]', from + 1); at !== -1; at = frames.indexOf('choices":[]', at + 1)) {
    if (frames.charCodeAt(at - 1) === 34) return at - 1;
  }
  return -1;
}
