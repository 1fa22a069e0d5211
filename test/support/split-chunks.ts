/**
 * Splits text at random boundaries, to replay realistic provider bytes the way a
 * network delivers them. Seeded, so a failing split can be reproduced from the seed.
 */
export function splitAtRandom(text: string, seed: number, maxPieces = 40): string[] {
  let state = seed >>> 0 || 1;
  const next = () => {
    // xorshift32
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > 0 && pieces.length < maxPieces - 1) {
    const size = 1 + (next() % Math.max(1, Math.ceil(text.length / 8)));
    pieces.push(rest.slice(0, size));
    rest = rest.slice(size);
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

/** The seeds every stream replay test runs over: single bytes, tiny and large chunks. */
export const REPLAY_SEEDS = [1, 7, 42, 1337, 9001, 123456];
