/**
 * `new Date(ms).toISOString()` for the timestamps of metering rows, two per request: the
 * date and time up to the second are formatted once per second and reused, so a row's
 * timestamp costs a concatenation instead of a Date and its formatting.
 */
let cachedSecond = Number.NaN;
let cachedPrefix = "";

export function isoTimestamp(ms: number): string {
  if (!Number.isSafeInteger(ms)) return new Date(ms).toISOString(); // fractional or invalid: the slow path, same answer or error
  const second = Math.floor(ms / 1_000);
  if (second !== cachedSecond) {
    const iso = new Date(second * 1_000).toISOString();
    // "2026-11-22T07:29:44." (years beyond 9999 format as ±YYYYYY: keep their own prefix).
    cachedPrefix = iso.slice(0, iso.length - 4);
    cachedSecond = second;
  }
  const millis = ms - second * 1_000;
  return cachedPrefix + (millis < 10 ? "00" : millis < 100 ? "0" : "") + millis + "Z";
}
