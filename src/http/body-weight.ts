/** A body as its text or as the chunks it was read in (request-body.ts `BodyBytes`, which reads bodies and weighs them). */
type ReadBody = string | { chunks: readonly Uint8Array[]; byteLength: number };

/**
 * What a large body's handling will take in memory, in bytes of plain body text that take as
 * much: its length, plus a weight for each JSON object and array in it. A text costs a few
 * times its length while it is handled (its string, the parsed value, the IR, the encoded
 * upstream body: 32 MiB of it took 131 MB); every container costs far more than its few
 * bytes (parsed, decoded into the IR, sent to and from a worker, encoded: 150,000 small
 * messages in 8 MiB took 133 MB, 300,000 content blocks 152 MB, test/bench/HISTORY.md
 * 2026-11-29 15:53–16:03 entry). The body budget (body-budget.ts) holds a body's weight, so
 * bodies of many small parts do not count as a quarter of what they cost.
 */
export function bodyWeight(body: ReadBody): number {
  const size = typeof body === "string" ? body.length : body.byteLength;
  return size + Math.round(estimatedContainers(body, size)) * CONTAINER_WEIGHT;
}

/**
 * One container's weight: 300–500 B of memory measured a container against ~4 B a byte of
 * text, so 75–125 bytes of text; the higher end, rounded up.
 */
const CONTAINER_WEIGHT = 128;
/** The body is sampled in this many windows of WINDOW_BYTES; a shorter body is counted whole. */
const WINDOWS = 32;
const WINDOW_BYTES = 2048;

const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;

/**
 * The `{` and `[` in the body, strings' included (a brace in a text is counted as one: the
 * estimate errs towards holding more). Counting every byte of 32 MiB would cost this thread
 * ~30 ms; the count in WINDOWS windows, one at a random place in each of WINDOWS equal
 * stretches of the body, scaled to its size, costs a fraction of a millisecond, and a sender
 * cannot know where the windows fall.
 */
function estimatedContainers(body: ReadBody, size: number): number {
  const byteAt = typeof body === "string" ? (at: number) => body.charCodeAt(at) : bytesReader(body.chunks);
  if (size <= WINDOWS * WINDOW_BYTES) return countOpenings(byteAt, 0, size);
  const stretch = size / WINDOWS;
  let counted = 0;
  for (let window = 0; window < WINDOWS; window++) {
    const start = Math.floor(window * stretch + Math.random() * (stretch - WINDOW_BYTES));
    counted += countOpenings(byteAt, start, start + WINDOW_BYTES);
  }
  return (counted * size) / (WINDOWS * WINDOW_BYTES);
}

function countOpenings(byteAt: (at: number) => number, from: number, to: number): number {
  let count = 0;
  for (let at = from; at < to; at++) {
    const code = byteAt(at);
    if (code === OPEN_BRACE || code === OPEN_BRACKET) count++;
  }
  return count;
}

/** The byte at an offset into the chunks, for offsets that mostly rise (it remembers the chunk it found last). */
function bytesReader(chunks: readonly Uint8Array[]): (at: number) => number {
  let index = 0;
  let chunkStart = 0;
  return (at) => {
    if (at < chunkStart) {
      index = 0;
      chunkStart = 0;
    }
    while (index < chunks.length && at >= chunkStart + chunks[index]!.byteLength) {
      chunkStart += chunks[index]!.byteLength;
      index++;
    }
    return chunks[index]?.[at - chunkStart] ?? 0;
  };
}
