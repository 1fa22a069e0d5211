import { afterAll, beforeAll, expect, test } from "bun:test";
import { startEventLoopDelayProbe } from "../../src/observability/event-loop-delay";
import { Metrics } from "../../src/observability/metrics";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";

/** `count` of the series and how many observations lay above `le` seconds, from /metrics text. */
function delays(text: string, le: string): { count: number; above: number } {
  const count = Number(/^switchyard_event_loop_delay_seconds_count (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
  const upTo = Number(new RegExp(`^switchyard_event_loop_delay_seconds_bucket\\{le="${le}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? Number.NaN);
  return { count, above: count - upTo };
}

test("a thread held for 300 ms shows as one delay above 250 ms, and only then", async () => {
  const metrics = new Metrics();
  const probe = startEventLoopDelayProbe(metrics, 5);
  try {
    await Bun.sleep(50);
    const calm = delays(metrics.render(), "0.25");
    expect(calm.count).toBeGreaterThan(0);
    expect(calm.above).toBe(0);
    const start = performance.now();
    while (performance.now() - start < 300) {
      // hold the thread, as a long synchronous job would
    }
    await Bun.sleep(20);
    const held = delays(metrics.render(), "0.25");
    expect(held.above).toBe(1);
    expect(probe.maxSeconds).toBeGreaterThanOrEqual(0.25);
  } finally {
    probe.stop();
  }
});

test("stop() ends the observations", async () => {
  const metrics = new Metrics();
  const probe = startEventLoopDelayProbe(metrics, 5);
  await Bun.sleep(30);
  probe.stop();
  const stopped = delays(metrics.render(), "1").count;
  await Bun.sleep(30);
  expect(delays(metrics.render(), "1").count).toBe(stopped);
});

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(() => harness.close());

test("the server exports switchyard_event_loop_delay_seconds on /metrics", async () => {
  await Bun.sleep(50);
  const text = await fetch(`${harness.server.url}/metrics`).then((r) => r.text());
  expect(text).toContain("# TYPE switchyard_event_loop_delay_seconds histogram");
  expect(delays(text, "+Inf").count).toBeGreaterThan(0);
});
