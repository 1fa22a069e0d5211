import { afterAll, describe, expect, test } from "bun:test";
import { callUpstream } from "../../src/routing/call-upstream";

/** An upstream that answers only when told to: the test holds calls open while the grace period ends. */
const waiting: Array<() => void> = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch() {
    await new Promise<void>((resolve) => waiting.push(resolve));
    return new Response("{}", { headers: { "content-type": "application/json" } });
  },
});
afterAll(() => {
  for (const answer of waiting) answer();
  server.stop(true);
});

const target = { protocol: "openai-chat" as const, baseUrl: `http://127.0.0.1:${server.port}/v1`, providerModelId: "m", apiKey: "k" };
const timeouts = { connectMs: 1000, firstByteMs: 10_000, idleMs: 10_000 };
const call = (graceOver: AbortSignal, stream = false) =>
  callUpstream({ target, body: "{}", stream, clientHeaders: new Headers(), requestId: "req-1", timeouts, clientSignal: new AbortController().signal, graceOver });

describe("callUpstream and the end of the shutdown grace period", () => {
  test("every call still waiting for its head is aborted, streamed or not; one already answered and released is not", async () => {
    const grace = new AbortController();
    const answered = call(grace.signal);
    for (let i = 0; i < 200 && waiting.length < 1; i++) await Bun.sleep(5);
    waiting.shift()!();
    const done = await answered;
    expect(done.ok).toBe(true);
    if (!done.ok) return;
    done.release();
    const pending = [call(grace.signal), call(grace.signal, true), call(grace.signal)];
    for (let i = 0; i < 200 && waiting.length < 3; i++) await Bun.sleep(5);
    expect(waiting).toHaveLength(3);
    grace.abort();
    const results = await Promise.all(pending);
    // Aborted, not timed out (the first-byte deadline would say upstream_timeout).
    expect(results.map((result) => (result.ok ? "answered" : result.error.kind))).toEqual(["upstream_unavailable", "upstream_unavailable", "upstream_unavailable"]);
    // The released call's controller was no longer under the signal: its body is still readable.
    expect(done.controller.signal.aborted).toBe(false);
    expect(await done.response.text()).toBe("{}");
    // The aborted calls' handlers still wait: let them end.
    while (waiting.length > 0) waiting.shift()!();
  });

  test("calls under two signals are aborted by their own only", async () => {
    const first = new AbortController();
    const second = new AbortController();
    const underFirst = call(first.signal);
    const underSecond = call(second.signal);
    for (let i = 0; i < 200 && waiting.length < 2; i++) await Bun.sleep(5);
    first.abort();
    const aborted = await underFirst;
    expect(aborted.ok ? "answered" : aborted.error.kind).toBe("upstream_unavailable");
    while (waiting.length > 0) waiting.shift()!();
    const answered = await underSecond;
    expect(answered.ok).toBe(true);
    if (answered.ok) answered.release();
  });
});
