import { describe, expect, test } from "bun:test";
import { irError, type IrRequest } from "../../src/ir";
import type { Principal } from "../../src/auth/principal";
import type { AdmissionCheck, AdmissionRequest, Grant } from "../../src/admission/admission-check";
import { admit } from "../../src/pipeline/admit";
import { arrivingRequest } from "../../src/metering/request-outcome";
import type { AttemptCandidate } from "../../src/routing/attempt-candidate";

const principal: Principal = { kind: "api_key", id: "key_1", accountId: "acct_1", namespaceId: null, scopes: ["inference:invoke"], expiresAt: null };
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
  funding: "platform",
  routingProfile: "balanced",
} as unknown as AttemptCandidate;

/** A check that logs what happens to what it grants, and answers as told. */
function check(name: string, log: string[], answer: "grant" | "refuse" | "throw"): AdmissionCheck {
  return {
    name,
    async admit(request: AdmissionRequest) {
      log.push(`${name}:admit:${request.costCeilingMicroUsd}`);
      if (answer === "throw") throw new Error("database unreachable");
      if (answer === "refuse") return { error: irError("rate_limited", `${name} refused`) };
      const grant: Grant = { settle: ({ chargeMicroUsd }) => log.push(`${name}:settle:${chargeMicroUsd}`), release: () => log.push(`${name}:release`) };
      return grant;
    },
  };
}

function input() {
  const record = arrivingRequest({ requestId: "req_1", principal, clientProtocol: "openai-chat", createdAt: new Date(), startedAt: 0 });
  return { principal, requestId: "req_1", ir, candidates: [candidate], record };
}

describe("the admit stage", () => {
  test("with no checks it admits at once, holds nothing and attributes nothing", async () => {
    let lookups = 0;
    const admitted = await admit({ checks: [], namespaces: { namespaceFor: async () => (lookups++, "ns_1") } }, input());
    expect(admitted.ok).toBe(true);
    expect(lookups).toBe(0);
  });

  test("every check sees the same cost ceiling; the grant settles each with the charge", async () => {
    const log: string[] = [];
    const request = input();
    const admitted = await admit({ checks: [check("a", log, "grant"), check("b", log, "grant")], namespaces: { namespaceFor: async () => "ns_1" } }, request);
    expect(admitted.ok).toBe(true);
    expect(request.record.namespaceId).toBe("ns_1");
    const ceiling = Number(log[0]!.split(":")[2]);
    expect(ceiling).toBeGreaterThan(0);
    expect(log).toEqual([`a:admit:${ceiling}`, `b:admit:${ceiling}`]);
    if (admitted.ok) admitted.grant.settle({ outcome: request.record, chargeMicroUsd: 7 });
    expect(log.slice(2)).toEqual(["a:settle:7", "b:settle:7"]);
  });

  test("the first refusal answers, later checks are not asked, and earlier grants are released", async () => {
    const log: string[] = [];
    const admitted = await admit({ checks: [check("a", log, "grant"), check("b", log, "refuse"), check("c", log, "grant")], namespaces: { namespaceFor: async () => null } }, input());
    expect(admitted).toMatchObject({ ok: false, error: { kind: "rate_limited", message: "b refused" } });
    expect(log.map((entry) => entry.replace(/:\d+$/, ""))).toEqual(["a:admit", "b:admit", "a:release"]);
  });

  test("a check that cannot decide fails closed with a 503, releasing what was granted", async () => {
    const log: string[] = [];
    const admitted = await admit({ checks: [check("a", log, "grant"), check("b", log, "throw")], namespaces: { namespaceFor: async () => null } }, input());
    expect(admitted).toMatchObject({ ok: false, error: { status: 503, retryAfter: 1 } });
    expect(log.map((entry) => entry.replace(/:\d+$/, ""))).toEqual(["a:admit", "b:admit", "a:release"]);
  });
});
