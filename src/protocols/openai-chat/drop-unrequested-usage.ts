/**
 * encodeRequest always asks a chat upstream for `stream_options.include_usage` (the bill
 * must not rest on an estimate). Relaying that stream as it is to a client that did not
 * ask would hand it a chunk it never requested: the usage-only chunk, `"choices":[]` with
 * a `usage` object. This removes such chunks from whole SSE frames; every other byte stays.
 */
export function dropUnrequestedUsage(frames: string): string {
  if (!frames.includes('"choices":[]')) return frames;
  return frames
    .split(/(?<=\n\n)/)
    .filter((frame) => !(frame.includes('"choices":[]') && frame.includes('"usage"')))
    .join("");
}
