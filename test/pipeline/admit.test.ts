import { describe, expect, test } from "bun:test";
import type { IrRequest } from "../../src/ir";
import type { Principal } from "../../src/auth/principal";
import type { AdmissionCheck, AdmissionRequest, Grant } from "../../src/admission/admission-check";
import { AdmissionChain } from "../../src/admission/admission-chain";
import { NO_POLICY } from "../../src/policy/compose-policies";
import type { EffectivePolicy, PrincipalRef } from "../../src/policy/effective-policy";
import { admit } from "../../src/pipeline/admit";
import { arrivingRequest } from "../../src/metering/request-outcome";
import type { AttemptCandidate } from "../../src/routing/attempt-candidate";

const principal: Principal = { kind: "api_key", id: "key_1", accountId: "acct_1", namespaceId: null, scopes: ["inference:invoke"], oauthClientId: null, expiresAt: null };
const ir = { model: "p/m", stream: false, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], params: { maxTokens: 10 } } as unknown as IrRequest;
const candidate = {
  protocol: "openai-chat",
  baseUrl: "http://127.0.0.1:1",
  providerModelId: "m",
  apiKey: "k",
  modelId: "p/m",
  providerId: "p",
  statsKey: "p/m",
  pricing: { input: 1, output: 2, contextTiers: [] },
  limits: {},
  funding: "cloud_credit",
  routingProfile: "balanced",
} as unknown as AttemptCandidate;

/** A check that logs what happens to what it grants, and answers as told. */
function check(name: string, log: string[], answer: "grant" | "refuse" | "throw"): AdmissionCheck {
  return {
    name,
    async admit(request: AdmissionRequest) {
      log.push(`${name}:admit:${request.costCeilingMicroUsd}`);
      if (answer === "throw") throw new Error("database unreachable");
      if (answer === "refuse") return { kind: "refusal", status: 429, code: "rate_limit_exceeded", message: `${name} refused`, retryAfterSecs: 3 };
      const grant: Grant = {
        kind: "grant",
        settle: async ({ chargeMicroUsd }) => void log.push(`${name}:settle:${chargeMicroUsd}`),
        release: async () => void log.push(`${name}:release`),
      };
      return grant;
    },
  };
}

/** A policy store that answers `policy` for every request and remembers the principals it was asked about. */
function policies(policy: EffectivePolicy = NO_POLICY, asked: PrincipalRef[][] = []) {
  return { effectivePolicy: async (_account: string, principals: readonly PrincipalRef[]) => (asked.push([...principals]), policy) };
}

function deps(checks: AdmissionCheck[], namespaceFor: () => Promise<string | null> = async () => "ns_1") {
  return { chain: new AdmissionChain([], checks), namespaces: { namespaceFor }, policies: policies() };
}

function input() {
  const record = arrivingRequest({ requestId: "req_1", principal, clientProtocol: "openai-chat", createdAt: new Date(), startedAt: 0 });
  return { principal, requestId: "req_1", ir, candidates: [candidate], record };
}

describe("the admit stage", () => {
  test("with no checks it admits at once, holds nothing and attributes nothing", async () => {
    let lookups = 0;
    const admitted = await admit(deps([], async () => (lookups++, "ns_1")), input());
    expect(admitted.ok).toBe(true);
    expect(lookups).toBe(0);
  });

  test("every check sees the same cost ceiling; the grant settles each with the charge", async () => {
    const log: string[] = [];
    const request = input();
    const admitted = await admit(deps([check("a", log, "grant"), check("b", log, "grant")]), request);
    expect(admitted.ok).toBe(true);
    expect(request.record.namespaceId).toBe("ns_1");
    const ceiling = Number(log[0]!.split(":")[2]);
    expect(ceiling).toBeGreaterThan(0);
    expect(log).toEqual([`a:admit:${ceiling}`, `b:admit:${ceiling}`]);
    if (admitted.ok) await admitted.grant.settle({ chargeMicroUsd: 7 });
    expect(log.slice(2)).toEqual(["a:settle:7", "b:settle:7"]);
  });

  test("the first refusal answers, later checks are not asked, and earlier grants are released", async () => {
    const log: string[] = [];
    const admitted = await admit(deps([check("a", log, "grant"), check("b", log, "refuse"), check("c", log, "grant")], async () => null), input());
    expect(admitted).toMatchObject({ ok: false, error: { kind: "rate_limited", message: "b refused", retryAfter: 3 } });
    expect(log.map((entry) => entry.replace(/:\d+$/, ""))).toEqual(["a:admit", "b:admit", "a:release"]);
  });

  test("a check that cannot decide fails closed with a 503, releasing what was granted", async () => {
    const log: string[] = [];
    const admitted = await admit(deps([check("a", log, "grant"), check("b", log, "throw")], async () => null), input());
    expect(admitted).toMatchObject({ ok: false, error: { status: 503, retryAfter: 1 } });
    expect(log.map((entry) => entry.replace(/:\d+$/, ""))).toEqual(["a:admit", "b:admit", "a:release"]);
  });

  test("the request's principals are its attributed namespace and its key; a policy refusal names the policy in the record", async () => {
    const asked: PrincipalRef[][] = [];
    const policy: EffectivePolicy = { budgets: [], rateLimits: [], guardrail: null };
    const source = { policyId: "pol_1", policyName: "ci budget", principal: { type: "api_key" as const, id: "key_1" } };
    const refusing: AdmissionCheck = { name: "budgets", admit: async () => ({ kind: "refusal", status: 402, code: "budget_exceeded", message: "no room", policy: source }) };
    const request = input();
    const admitted = await admit({ chain: new AdmissionChain([refusing]), namespaces: { namespaceFor: async () => "ns_9" }, policies: policies(policy, asked) }, request);
    expect(asked).toEqual([[{ type: "namespace", id: "ns_9" }, { type: "api_key", id: "key_1" }]]);
    expect(admitted).toMatchObject({ ok: false, error: { kind: "budget_exceeded", status: 402, message: "budget_exceeded: no room" } });
    expect(request.record.warnings).toEqual([{ code: "refused_by_policy", field: "pol_1", message: 'budget_exceeded by policy "ci budget" bound to api_key key_1' }]);
  });

  test("with no policy the policy checks are skipped and only the others run", async () => {
    const log: string[] = [];
    const chain = new AdmissionChain([check("policy", log, "refuse")], [check("wallet", log, "grant")]);
    const admitted = await admit({ chain, namespaces: { namespaceFor: async () => null }, policies: policies() }, input());
    expect(admitted.ok).toBe(true);
    expect(log.map((entry) => entry.replace(/:\d+$/, ""))).toEqual(["wallet:admit"]);
  });
});
