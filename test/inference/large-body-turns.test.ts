import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { metricValue } from "../support/api-client";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import type { TestAccount } from "../support/test-server";

/**
 * A tenant that floods the server with large bodies must not hold back another tenant's:
 * the body budget (BODY_MEMORY_BUDGET_BYTES) gives turns by account, so the other tenant's
 * one body waits for at most one of the flooder's, not for its whole queue.
 */

const MiB = 1024 * 1024;
/** Each 2 MiB body fits the 3 MiB budget alone: the server takes them one at a time. */
const BUDGET = 3 * MiB;
/** Each answer takes this long upstream, so a body holds its room that long. */
const UPSTREAM_MS = 400;
const FLOOD = 4;

let harness: InferenceHarness;
let victim: TestAccount;
beforeAll(async () => {
  harness = await startInferenceHarness({ bodyMemoryBudgetBytes: BUDGET });
  victim = await harness.server.createAccount(undefined, 100_000_000);
});
afterAll(() => harness.close());

function largeRequest(apiKey: string): Promise<number> {
  const body = JSON.stringify({ model: "mock-openai/gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "x".repeat(2 * MiB) }] });
  return fetch(`${harness.server.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });
}

describe("large bodies of two accounts", () => {
  test("the victim's one body is served right after the flooder's first, not after its whole queue", async () => {
    harness.mocks.openai.queueScenarios(...Array.from({ length: FLOOD + 1 }, () => ({ kind: "slow" as const, delayMs: UPSTREAM_MS })));
    const finished: string[] = [];
    const upstreamSaw = harness.mocks.openai.requests.length;
    const flood = Array.from({ length: FLOOD }, (_, index) => largeRequest(harness.account.apiKey).then((status) => finished.push(`flooder ${index} ${status}`)));
    // The victim's arrives while the flooder's first is with the upstream (UPSTREAM_MS) and the rest wait.
    for (let waited = 0; waited < 10_000 && harness.mocks.openai.requests.length === upstreamSaw; waited += 5) await Bun.sleep(5);
    expect(harness.mocks.openai.requests.length).toBe(upstreamSaw + 1);
    // /metrics shows the body being served held, and the others waiting for room (once all have arrived).
    let waiting = await metricValue(harness.server.url, "switchyard_body_budget_waiting");
    for (let waited = 0; waited < 5_000 && waiting !== FLOOD - 1; waited += 5) {
      await Bun.sleep(5);
      waiting = await metricValue(harness.server.url, "switchyard_body_budget_waiting");
    }
    expect(waiting).toBe(FLOOD - 1);
    expect(await metricValue(harness.server.url, "switchyard_body_budget_held_bytes")).toBeGreaterThanOrEqual(2 * MiB);
    const victims = largeRequest(victim.apiKey).then((status) => finished.push(`victim ${status}`));
    await Promise.all([...flood, victims]);
    expect(await metricValue(harness.server.url, "switchyard_body_budget_held_bytes")).toBe(0);
    expect(await metricValue(harness.server.url, "switchyard_body_budget_waiting")).toBe(0);
    expect(finished).toHaveLength(FLOOD + 1);
    expect(finished.every((entry) => entry.endsWith(" 200"))).toBe(true);
    expect(finished.indexOf("victim 200")).toBe(1);
  });
});
