import { describe, expect, test } from "bun:test";
import { isoTimestamp } from "../../src/metering/iso-timestamp";

describe("isoTimestamp", () => {
  test("matches Date.prototype.toISOString for 20,000 instants, in and out of order, across second boundaries", () => {
    const now = Date.parse("2026-11-22T07:59:59.990Z");
    const instants: number[] = [];
    // Millisecond steps across a second boundary, then back again (the cached second changes both ways).
    for (let ms = now - 5; ms < now + 25; ms++) instants.push(ms);
    for (let ms = now + 25; ms > now - 1_005; ms -= 7) instants.push(ms);
    // Random instants from before 1970 to beyond 9999.
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    while (instants.length < 20_000) instants.push(Math.floor((random() - 0.3) * 4e14));
    instants.push(0, -1, 999, 1_000, 253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_001);
    for (const ms of instants) expect(isoTimestamp(ms)).toBe(new Date(ms).toISOString());
  });

  test("a fractional instant takes the Date path; an invalid one throws like toISOString", () => {
    expect(isoTimestamp(1_700_000_000_123.7)).toBe(new Date(1_700_000_000_123.7).toISOString());
    expect(() => isoTimestamp(Number.NaN)).toThrow(RangeError);
  });
});
