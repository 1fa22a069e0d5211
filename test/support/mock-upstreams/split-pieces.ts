/** How the mocks cut text and JSON into stream deltas. Every split is lossless. */

/**
 * Word-like pieces, roughly as a tokenizer would stream them:
 * "Hello, world!" → ["Hello", ",", " world", "!"].
 */
export function splitIntoWords(text: string): string[] {
  return text.match(/\s*[\p{L}\p{N}_]+|\s*[^\s\p{L}\p{N}_]|\s+/gu) ?? [];
}

/**
 * Fragments of a JSON string, cut mid-token on purpose (`{"loc`, `ation": "`, …) since
 * that is how OpenAI and Anthropic stream tool arguments.
 */
export function splitIntoFragments(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let start = 0; start < text.length; start += size) out.push(text.slice(start, start + size));
  return out;
}

/** The running total after each of `steps` chunks, ending exactly at `total`. */
export function cumulativeCounts(total: number, steps: number): number[] {
  return Array.from({ length: steps }, (_, i) => Math.round((total * (i + 1)) / steps));
}
