import { describe, expect, test } from "bun:test";
import { rateLimitStatus, WindowReadings } from "../../src/admission/rate-limit-status";

const rates = [
  { key: "a", windowSecs: 60, maxRequests: 10, maxTokens: null },
  { key: "b", windowSecs: 3600, maxRequests: 100, maxTokens: 5000 },
];

describe("rateLimitStatus", () => {
  test("shows, per dimension, the clause with the least left, with its reset", () => {
    expect(rateLimitStatus(rates, [{ requests: 4, tokens: 40, resetSecs: 12 }, { requests: 95, tokens: 4000, resetSecs: 1800 }])).toEqual({
      requests: { limit: 100, remaining: 5, resetSecs: 1800 },
      tokens: { limit: 5000, remaining: 1000, resetSecs: 1800 },
    });
    expect(rateLimitStatus(rates, [{ requests: 9, tokens: 0, resetSecs: 3 }, { requests: 10, tokens: 0, resetSecs: null }])!.requests).toEqual({ limit: 10, remaining: 1, resetSecs: 3 });
  });

  test("never shows less than 0 left (a lease's row may count past the limit), and none for no rate limit", () => {
    expect(rateLimitStatus(rates.slice(0, 1), [{ requests: 12, tokens: 0, resetSecs: 1 }])).toEqual({ requests: { limit: 10, remaining: 0, resetSecs: 1 } });
    expect(rateLimitStatus([], [])).toBeUndefined();
  });
});

describe("WindowReadings, for requests admitted from a lease", () => {
  test("takes each leased admission off the last batch's reading", () => {
    const readings = new WindowReadings();
    readings.note("set", [{ requests: 4, tokens: 40, resetSecs: 12 }, { requests: 50, tokens: 100, resetSecs: 900 }]);
    expect(readings.admitLeased("set", rates, 10)!.requests).toEqual({ limit: 10, remaining: 5, resetSecs: 12 });
    expect(readings.admitLeased("set", rates, 10)!.requests!.remaining).toBe(4);
    expect(readings.admitLeased("set", rates, 10)!.tokens!.remaining).toBe(5000 - 130);
  });

  test("stays bounded in the number of sets it remembers", () => {
    const readings = new WindowReadings(2);
    for (const set of ["x", "y", "z"]) readings.note(set, [{ requests: 9, tokens: 0, resetSecs: 1 }]);
    expect(readings.admitLeased("z", rates.slice(0, 1), 1)!.requests!.remaining).toBe(0);
    expect(readings.admitLeased("x", rates.slice(0, 1), 1)!.requests!.remaining).toBe(10);
  });
});
