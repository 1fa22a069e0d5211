import { describe, expect, test } from "bun:test";
import { EndpointStats } from "../../src/routing/endpoint-stats";

const MINUTE = 60_000;

function clock(start = 1_700_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("EndpointStats", () => {
  test("an endpoint without attempts has a zero success rate and unknown timings", () => {
    expect(new EndpointStats().snapshot("openai/gpt-4.1")).toEqual({
      requestCount: 0,
      successCount: 0,
      successRate: 0,
      p50LatencyMs: undefined,
      p50TtftMs: undefined,
      outputTokensPerSecond: undefined,
    });
  });

  test("success rate counts provider errors and timeouts as failures", () => {
    const stats = new EndpointStats();
    for (let i = 0; i < 6; i += 1) stats.record("k", { outcome: "success", latencyMs: 100, ttftMs: 10 });
    stats.record("k", { outcome: "provider_error" });
    stats.record("k", { outcome: "timeout" });
    const snapshot = stats.snapshot("k");
    expect(snapshot.requestCount).toBe(8);
    expect(snapshot.successRate).toBe(0.75);
  });

  test("medians come from successful attempts only", () => {
    const stats = new EndpointStats();
    for (const ms of [100, 300, 200]) stats.record("k", { outcome: "success", latencyMs: ms, ttftMs: ms / 10, outputTokensPerSecond: ms / 2 });
    stats.record("k", { outcome: "timeout", latencyMs: 60_000, ttftMs: 60_000 });
    expect(stats.snapshot("k")).toMatchObject({ p50LatencyMs: 200, p50TtftMs: 20, outputTokensPerSecond: 100 });
  });

  test("the median of an even count is the midpoint of the middle two", () => {
    const stats = new EndpointStats();
    for (const ms of [100, 200, 300, 400]) stats.record("k", { outcome: "success", latencyMs: ms });
    expect(stats.snapshot("k").p50LatencyMs).toBe(250);
  });

  test("keys are independent", () => {
    const stats = new EndpointStats();
    stats.record("groq/a", { outcome: "success" });
    stats.record("mistral/a", { outcome: "timeout" });
    expect(stats.snapshot("groq/a").successRate).toBe(1);
    expect(stats.snapshot("mistral/a").successRate).toBe(0);
  });

  test("attempts leave the window after an hour with an injected clock", () => {
    const time = clock();
    const stats = new EndpointStats({ now: time.now });
    stats.record("k", { outcome: "provider_error", ttftMs: 5 });
    time.advance(30 * MINUTE);
    stats.record("k", { outcome: "success", ttftMs: 50 });
    expect(stats.snapshot("k")).toMatchObject({ requestCount: 2, successRate: 0.5, p50TtftMs: 50 });

    time.advance(30 * MINUTE); // the first attempt is an hour old now
    expect(stats.snapshot("k")).toMatchObject({ requestCount: 1, successRate: 1 });

    time.advance(30 * MINUTE);
    expect(stats.snapshot("k").requestCount).toBe(0);
    expect(stats.keys()).toEqual([]);
  });

  test("an attempt still counts 59 minutes into the window", () => {
    const time = clock(0);
    const stats = new EndpointStats({ now: time.now });
    stats.record("k", { outcome: "success" });
    time.advance(59 * MINUTE + 59_999);
    expect(stats.snapshot("k").requestCount).toBe(1);
    time.advance(1);
    expect(stats.snapshot("k").requestCount).toBe(0);
  });

  test("a reused ring slot forgets the bucket it held an hour earlier", () => {
    const time = clock(0);
    const stats = new EndpointStats({ now: time.now });
    for (let i = 0; i < 5; i += 1) stats.record("k", { outcome: "timeout" });
    time.advance(60 * MINUTE); // same slot, next period
    stats.record("k", { outcome: "success" });
    expect(stats.snapshot("k")).toMatchObject({ requestCount: 1, successRate: 1 });
  });

  test("reservoirs stay bounded and weight each bucket by its traffic", () => {
    const time = clock(0);
    let seed = 1;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    const stats = new EndpointStats({ now: time.now, reservoirSize: 8, random });
    // A busy minute of 1000 fast attempts, then a quiet minute of 8 slow ones: the median is fast.
    for (let i = 0; i < 1000; i += 1) stats.record("k", { outcome: "success", ttftMs: 100 });
    time.advance(MINUTE);
    for (let i = 0; i < 8; i += 1) stats.record("k", { outcome: "success", ttftMs: 900 });
    expect(stats.snapshot("k")).toMatchObject({ requestCount: 1008, p50TtftMs: 100 });
  });

  test("rejects a window shorter than a bucket", () => {
    expect(() => new EndpointStats({ windowMs: 1000, bucketMs: 60_000 })).toThrow();
  });
});
