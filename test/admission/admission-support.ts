import type { AdmissionRequest } from "../../src/admission/admission-check";
import type { Funding } from "../../src/funding/funding-source";
import type { IrRequest } from "../../src/ir";
import type { Principal } from "../../src/auth/principal";
import { arrivingRequest } from "../../src/metering/request-outcome";
import { composePolicies } from "../../src/policy/compose-policies";
import type { BoundPolicy, EffectivePolicy, PrincipalRef } from "../../src/policy/effective-policy";
import { toPolicyRecord } from "../../src/policy/policy-record";
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { migrate } from "../../src/db/migrate";
import { createTestDatabase, BIGINT_AS_NUMBER } from "../support/test-database";

/** A policy bound to a principal, as the policy store would load it (spec validated, patterns compiled). */
export function bound(id: string, kind: string, spec: object, principal: PrincipalRef = { type: "api_key", id: "k_test" }, disabled = false): BoundPolicy {
  return { policy: toPolicyRecord({ id, name: `${kind} ${id}`, kind, spec, disabled_at: disabled ? new Date() : null }), principal };
}

export function effective(...policies: BoundPolicy[]): EffectivePolicy {
  return composePolicies(policies);
}

export function request(policy: EffectivePolicy, overrides: Partial<AdmissionRequest> & { funding?: Funding } = {}): AdmissionRequest {
  const principal: Principal = { kind: "api_key", id: "k_test", accountId: "acct_test", namespaceId: null, scopes: [], oauthClientId: null, expiresAt: null };
  const ir = { model: "openai/gpt-4o-mini", stream: false, messages: [], params: {} } as unknown as IrRequest;
  return {
    principal,
    requestId: "req_test",
    ir,
    candidates: [],
    record: arrivingRequest({ requestId: "req_test", principal, clientProtocol: "openai-chat", createdAt: new Date(), startedAt: 0 }),
    policy,
    model: "openai/gpt-4o-mini",
    stream: false,
    maxTokens: undefined,
    outputCeiling: 100,
    costCeilingMicroUsd: 100,
    funding: "cloud_credit",
    texts: () => ["hello"],
    ...overrides,
  };
}

/**
 * A throwaway database, migrated, for the counters' tests: `sql` (what PolicyCounters uses;
 * `calls()` counts the statements it sent) and `reader` (for the tests' own reads, not counted).
 */
export async function countersDatabase(): Promise<{ sql: Sql; reader: Sql; calls(): number; close(): Promise<void> }> {
  const database = await createTestDatabase();
  let calls = 0;
  const sql = postgres(database.url, { max: 8, onnotice: () => {}, debug: () => void calls++, types: BIGINT_AS_NUMBER }) as unknown as Sql;
  const reader = postgres(database.url, { max: 2, onnotice: () => {}, types: BIGINT_AS_NUMBER }) as unknown as Sql;
  await migrate(sql);
  return {
    sql,
    reader,
    calls: () => calls,
    async close() {
      await sql.end();
      await reader.end();
      await database.drop();
    },
  };
}

