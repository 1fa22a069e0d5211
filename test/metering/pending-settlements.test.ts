import { describe, expect, test } from "bun:test";
import { PendingSettlements } from "../../src/metering/pending-settlements";
import { arrivingRequest, type RequestOutcome } from "../../src/metering/request-outcome";

function outcome(accountId: string, requestId: string, namespaceId: string | null, requestedModel = "p/m"): RequestOutcome {
  const principal = { kind: "api_key" as const, id: "k", accountId, namespaceId: null, scopes: [], oauthClientId: null, expiresAt: null };
  return { ...arrivingRequest({ requestId, principal, clientProtocol: "openai-chat", createdAt: new Date(), startedAt: 0 }), namespaceId, streamed: true, requestedModel };
}

describe("PendingSettlements", () => {
  test("finds the newest pending request of an id within the account (and namespace), until it is done", () => {
    const pending = new PendingSettlements();
    const first = outcome("a", "id-1", "ns_1", "p/first");
    const second = outcome("a", "id-1", "ns_2", "p/second");
    pending.add(first);
    pending.add(second);
    expect(pending.find("a", "id-1", null)?.modelId).toBe("p/second");
    expect(pending.find("a", "id-1", "ns_1")?.modelId).toBe("p/first");
    expect(pending.find("b", "id-1", null)).toBeUndefined();
    expect(pending.find("a", "id-2", null)).toBeUndefined();
    pending.done(second);
    expect(pending.find("a", "id-1", null)?.modelId).toBe("p/first");
    pending.done(first);
    pending.done(first); // twice is harmless
    expect(pending.find("a", "id-1", null)).toBeUndefined();
    expect(pending.size).toBe(0);
  });

  test("a settled request is described by what its receipt showed when it settled, keeps nothing of its outcome, and ends when its rows are written", () => {
    const pending = new PendingSettlements();
    const older = outcome("a", "id-1", "ns_1", "p/older");
    const newer = outcome("a", "id-1", "ns_2", "p/newer");
    pending.add(older);
    pending.add(newer);
    const settled = pending.settle(older);
    // The outcome may still be written to by its request's last steps: the receipt does not follow.
    older.requestedModel = "p/changed";
    expect(pending.find("a", "id-1", "ns_1")).toEqual({ namespaceId: "ns_1", modelId: "p/older", providerId: null });
    // The newest request of the id is still the one a receipt describes, settled or not.
    expect(pending.find("a", "id-1", null)?.modelId).toBe("p/newer");
    // Only strings and nulls: the rows may wait seconds, and the outcome (its attempts, the
    // request's body through their usage bounds) must not wait with them.
    expect(Object.values(settled).every((value) => value === null || typeof value === "string")).toBe(true);
    pending.done(older); // its outcome is no longer an entry: harmless
    expect(pending.find("a", "id-1", "ns_1")?.modelId).toBe("p/older");
    pending.done(settled);
    expect(pending.find("a", "id-1", "ns_1")).toBeUndefined();
    pending.done(pending.settle(newer));
    expect(pending.size).toBe(0);
  });

  test("never holds more ids than its bound: the oldest are forgotten first", () => {
    const pending = new PendingSettlements(3);
    for (let i = 0; i < 5; i++) pending.add(outcome("a", `id-${i}`, null));
    expect(pending.size).toBe(3);
    expect(pending.find("a", "id-0", null)).toBeUndefined();
    expect(pending.find("a", "id-4", null)).toBeDefined();
  });
});
