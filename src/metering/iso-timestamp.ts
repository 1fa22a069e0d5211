/**
 * `new Date(ms).toISOString()` for the timestamps of metering rows, two per request: the
 * date and time up to the second are formatted once per second and reused, so a row's
 * timestamp costs a concatenation instead of a Date and its formatting.
 */
let cachedSecond = Number.NaN;
let cachedPrefix = "";

/**
 * "000Z" … "999Z". A timestamp is one concatenation of two shared strings: built digit by
 * digit it was three nested concatenations and a new string of digits, all kept with the
 * row while it waits to be written (test/bench/retained.ts).
 */
const MILLIS_SUFFIXES: readonly string[] = Array.from({ length: 1_000 }, (_, millis) => `${String(millis).padStart(3, "0")}Z`);

export function isoTimestamp(ms: number): string {
  if (!Number.isSafeInteger(ms)) return new Date(ms).toISOString(); // fractional or invalid: the slow path, same answer or error
  const second = Math.floor(ms / 1_000);
  if (second !== cachedSecond) {
    const iso = new Date(second * 1_000).toISOString();
    // "2026-11-22T07:29:44." (years beyond 9999 format as ±YYYYYY: keep their own prefix).
    cachedPrefix = iso.slice(0, iso.length - 4);
    cachedSecond = second;
  }
  return cachedPrefix + MILLIS_SUFFIXES[ms - second * 1_000]!;
}
