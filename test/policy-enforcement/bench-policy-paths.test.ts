import { afterAll, beforeAll, expect, test } from "bun:test";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { requestOnce } from "../bench/load";
import { measurePolicyCosts, policyPaths, renderPolicyCosts } from "../bench/policy-paths";

/** The benchmark's policy paths work (the benchmark itself is run on its own, `bun run bench`). */
let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(() => harness.close());

test("each policy path of the benchmark is served, and the redact path redacts", async () => {
  const paths = await policyPaths(harness.server.url, harness.account.apiKey);
  expect(paths.map((path) => path.label)).toEqual(["metered, no policy bound", "budget + rate limit + guardrail bound", "stream, no policy bound", "stream, response-side redact pattern"]);
  for (const { target } of paths) expect(await requestOnce(target)).toBeUndefined();

  harness.mocks.openai.queueScenarios({ kind: "text", text: "Write to ops@example.com today." });
  const redacted = paths[3]!.target;
  const text = await (await fetch(redacted.url, { method: "POST", headers: redacted.headers, body: redacted.body })).text();
  const content = [...text.matchAll(/"content":"([^"]*)"/g)].map((match) => match[1]).join("");
  expect(content).toBe("Write to [REDACTED] today.");

  const costs = await measurePolicyCosts(paths, process.pid, undefined, { lanes: 2, sliceMs: 50, slices: 1, warmupMs: 10 });
  expect(costs.every((cost) => cost.errors === 0 && cost.rps > 0 && Number.isFinite(cost.gatewayCpuUs))).toBe(true);
  expect(renderPolicyCosts("auto", costs).split("\n").filter((line) => line.startsWith("| ") && !line.startsWith("| path"))).toHaveLength(4);
});
