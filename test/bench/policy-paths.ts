import { chatTarget, runLanes, type Target } from "./load";
import { cpuTicks, postgresTicks, TICKS_PER_SECOND } from "./process-cpu";

/**
 * What the policy engine costs (docs/performance.md): the same Switchyard serves the metered
 * chat path with a key that has no policy bound, a key with a budget, a rate limit and a
 * guardrail bound, and streams for a key with and without a response-side redact
 * pattern. Each path's gateway CPU per request is read from /proc around interleaved
 * slices, so every row comes from the same run, the same process and the same load.
 */

/** Large enough never to refuse during a run: the bench measures admission, not refusals. */
const BUDGET = { window: "day", limit_micro_usd: 1_000_000_000_000 };
const RATE_LIMIT = { window_secs: 10, max_requests: 1_000_000_000 };
const MODELS = ["mock-openai/gpt-4o-mini", "mock-anthropic/claude-sonnet-4-5"];
/** A guardrail with every request-side rule, and a block pattern the prompt never matches. */
const GUARDRAIL = { model_allow: MODELS, max_request_tokens: 100_000, allow_streaming: true, content_patterns: [{ name: "card", pattern: "\\b\\d{16}\\b", action: "block" }] };
/**
 * A common redaction (e-mail addresses): its prefix is a letter class, so nearly every
 * position of an answer could start a match and the guard holds text back: the worst
 * ordinary case, not a pattern that never applies.
 */
const REDACT = { content_patterns: [{ name: "e-mail", pattern: "[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}", action: "redact" }] };

export interface PolicyPath {
  target: Target;
  label: string;
}

interface Json {
  [key: string]: unknown;
}

async function manage(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<Json> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as Json;
  if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

/** A new key of the account `token` belongs to, with `policies` (kind → spec) bound to it; returns its token. */
async function keyWith(baseUrl: string, token: string, policies: Array<[string, unknown]>): Promise<string> {
  const key = await manage(baseUrl, token, "POST", "/v1/keys", { display_name: "bench", scopes: ["inference:invoke"] });
  for (const [kind, spec] of policies) {
    const policy = await manage(baseUrl, token, "POST", "/v1/policies", { name: `bench ${kind}`, kind, spec });
    await manage(baseUrl, token, "POST", `/v1/policies/${String(policy.id)}/bind`, { principal_type: "api_key", principal_id: key.id });
  }
  return String(key.token);
}

/** The four paths on one Switchyard (its account's key `token`), same-protocol chat to the OpenAI mock. */
export async function policyPaths(baseUrl: string, token: string): Promise<PolicyPath[]> {
  const model = "mock-openai/gpt-4o-mini";
  const none = await keyWith(baseUrl, token, []);
  const bound = await keyWith(baseUrl, token, [
    ["budget", BUDGET],
    ["rate_limit", RATE_LIMIT],
    ["guardrail", GUARDRAIL],
  ]);
  const redact = await keyWith(baseUrl, token, [["guardrail", REDACT]]);
  return [
    { label: "metered, no policy bound", target: chatTarget("policy:none", baseUrl, none, model) },
    { label: "budget + rate limit + guardrail bound", target: chatTarget("policy:bound", baseUrl, bound, model) },
    { label: "stream, no policy bound", target: chatTarget("policy:stream-none", baseUrl, none, model, true) },
    { label: "stream, response-side redact pattern", target: chatTarget("policy:stream-redact", baseUrl, redact, model, true) },
  ];
}


export interface PolicyCost {
  label: string;
  rps: number;
  gatewayCpuUs: number;
  /** PostgreSQL's CPU per request (the cluster's processes), or NaN on the embedded database. */
  postgresCpuUs: number;
  errors: number;
}

/** Each path in `slices` interleaved slices of `sliceMs` at `lanes` connections, with the gateway's CPU around each slice. */
export async function measurePolicyCosts(
  paths: PolicyPath[],
  pid: number,
  postmasterPid: number | undefined,
  settings: { lanes: number; sliceMs: number; slices: number; warmupMs: number },
): Promise<PolicyCost[]> {
  const tallies = paths.map(() => ({ completed: 0, seconds: 0, ticks: 0, postgresTicks: 0, errors: 0 }));
  const postgres = () => (postmasterPid === undefined ? 0 : postgresTicks(postmasterPid));
  for (const path of paths) await runLanes(path.target, settings.lanes, settings.warmupMs);
  for (let slice = 0; slice < settings.slices; slice++) {
    for (const [index, path] of paths.entries()) {
      const [before, postgresBefore] = [cpuTicks(pid), postgres()];
      const run = await runLanes(path.target, settings.lanes, settings.sliceMs);
      const tally = tallies[index]!;
      tally.ticks += cpuTicks(pid) - before;
      tally.postgresTicks += postgres() - postgresBefore;
      tally.completed += run.completed;
      tally.seconds += run.seconds;
      tally.errors += run.errors.count;
    }
  }
  return paths.map((path, index) => {
    const tally = tallies[index]!;
    return {
      label: path.label,
      rps: tally.completed / Math.max(tally.seconds, 1e-9),
      gatewayCpuUs: ((tally.ticks / TICKS_PER_SECOND) * 1e6) / Math.max(1, tally.completed),
      postgresCpuUs: postmasterPid === undefined ? Number.NaN : ((tally.postgresTicks / TICKS_PER_SECOND) * 1e6) / Math.max(1, tally.completed),
      errors: tally.errors,
    };
  });
}

/** Gateway + PostgreSQL CPU per request (the gateway's alone on the embedded database). */
export const totalCpuUs = (cost: PolicyCost) => cost.gatewayCpuUs + (Number.isNaN(cost.postgresCpuUs) ? 0 : cost.postgresCpuUs);

/** The report's section: one row per path, CPU and rps against the path without policy. */
export function renderPolicyCosts(mode: string, costs: PolicyCost[]): string {
  const lines = [
    `### What the policy engine costs (Switchyard ${mode}, same protocol)`,
    "",
    "| path | rps @ 64 | rps ÷ no policy | CPU µs/request: gateway + PostgreSQL = total | total ÷ no policy |",
    "|---|--:|--:|--:|--:|",
  ];
  for (const [index, cost] of costs.entries()) {
    // Rows 0 and 1 are the plain path without and with policies, rows 2 and 3 the streams.
    const reference = costs[index < 2 ? 0 : 2] ?? costs[0]!;
    const versus = (value: string) => (cost === reference ? "—" : value);
    const postgres = Number.isNaN(cost.postgresCpuUs) ? "n/a" : cost.postgresCpuUs.toFixed(1);
    lines.push(
      `| ${cost.label}${cost.errors > 0 ? ` (${cost.errors} errors)` : ""} | ${Math.round(cost.rps).toLocaleString("en-US")} | ${versus(`${(cost.rps / reference.rps).toFixed(2)}×`)} | ` +
        `${cost.gatewayCpuUs.toFixed(1)} + ${postgres} = ${totalCpuUs(cost).toFixed(1)} | ${versus(`${(totalCpuUs(cost) / totalCpuUs(reference)).toFixed(2)}×`)} |`,
    );
  }
  return lines.join("\n");
}
