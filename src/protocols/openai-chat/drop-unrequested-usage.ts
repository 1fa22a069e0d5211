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
  let at = frames.indexOf('"choices":[]');
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
    at = frames.indexOf('"choices":[]', end);
  }
  return from === 0 ? frames : out + frames.slice(from);
}
