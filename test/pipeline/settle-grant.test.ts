import { describe, expect, test } from "bun:test";
import type { Grant } from "../../src/admission/admission-check";
import type { Principal } from "../../src/auth/principal";
import { arrivingRequest } from "../../src/metering/request-outcome";
import type { AttemptRecord } from "../../src/routing/attempt-record";
import { RequestSettlement } from "../../src/pipeline/settle";

const principal: Principal = { kind: "api_key", id: "key_1", accountId: "acct_1", namespaceId: null, scopes: [], oauthClientId: null, expiresAt: null };

/** A grant that logs how it was ended. */
function loggingGrant(log: string[]): Grant {
  return {
    kind: "grant",
    settle: async ({ chargeMicroUsd }) => void log.push(`settle:${chargeMicroUsd}`),
    release: async () => void log.push("release"),
  };
}

function settlement() {
  // No record deps: nothing is written (METERING=off), which leaves only the grant's ending to observe.
  return new RequestSettlement(undefined, arrivingRequest({ requestId: "req_1", principal, clientProtocol: "openai-chat", createdAt: new Date(), startedAt: 0 }));
}

describe("the admission grant at settlement", () => {
  test("a request that never reached an upstream releases its grant, once", () => {
    const log: string[] = [];
    const request = settlement();
    request.hold(loggingGrant(log));
    request.settle("failed", 400);
    request.settle("failed", 500);
    expect(log).toEqual(["release"]);
  });

  test("a request that reached an upstream settles its grant (the charge unknown when nothing is recorded), once", () => {
    const log: string[] = [];
    const request = settlement();
    request.hold(loggingGrant(log));
    request.outcome.attempts.push({ ordinal: 1, outcome: "success", signals: [], startedAt: 0 } as unknown as AttemptRecord);
    request.settle("cancelled", 499);
    request.settle("succeeded", 200);
    expect(log).toEqual(["settle:null"]);
  });
});
