import type { Sql } from "../connect-database";
import type { UsageEvidence } from "../usage-evidence-shape";
import { runQuery, runQueryPlannedPerCall, runQueryRow } from "./run-query";

/** A stored request record as the history lists it: metadata only, no prompt or response. */
export interface RequestRecordRow {
  id: string;
  request_id: string;
  billing_status: string;
  created_at: Date;
  completed_at: Date;
  prompt_tokens: number;
  completion_tokens: number;
  final_charge_micro_usd: number | null;
  finish_reason: string | null;
  first_token_kind: string | null;
  funding_source: string | null;
  generation_duration_ms: number | null;
  request_duration_ms: number | null;
  upstream_duration_ms: number | null;
  ttft_ms: number | null;
  model_id: string | null;
  provider_id: string | null;
  routing_profile: string | null;
  status: string;
  status_code: number;
  streamed: boolean;
  used_capabilities: string[];
  usage_evidence: UsageEvidence;
  /** The `refused_by_policy` warning of a request a policy refused: the policy's id in `field`. */
  refusal: { field?: string; message: string } | null;
  /** The name of the routing preset the request named (its `routing_preset` warning), or null. */
  routing_preset: string | null;
}

export interface NamespaceUsageRow {
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_micro_usd: number;
  billing_anomalies: number;
  capability_request_counts: Record<string, number>;
}

export interface AccountUsageRow {
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  billing_anomalies: number;
  /** Signed sums as stored: debits are negative. */
  usage_amount_micro_usd: number;
  usage_count: number;
  pending_debit_recovery_amount_micro_usd: number;
  pending_debit_recovery_count: number;
}

export interface SettlementRow {
  request_id: string;
  billing_status: string;
  model_id: string | null;
  provider_id: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** The billing-audit charge, else the request row's; null when unknown. */
  charge_micro_usd: number | null;
}

/** A half-open time window [from, to). */
export interface TimeWindow {
  from: Date;
  to: Date;
}

export function listNamespaceRequests(sql: Sql, accountId: string, namespaceId: string, limit: number, offset: number): Promise<RequestRecordRow[]> {
  return runQueryPlannedPerCall<RequestRecordRow>(sql, "listNamespaceRequests", [accountId, namespaceId, limit, offset]);
}

export async function namespaceUsage(sql: Sql, accountId: string, namespaceId: string, window: TimeWindow): Promise<NamespaceUsageRow> {
  const [row] = await runQuery<NamespaceUsageRow>(sql, "namespaceUsage", [accountId, namespaceId, window.from.toISOString(), window.to.toISOString()]);
  return row!;
}

/** `namespaceId` null = the whole account. */
export async function accountUsage(sql: Sql, accountId: string, namespaceId: string | null, window: TimeWindow): Promise<AccountUsageRow> {
  const [row] = await runQuery<AccountUsageRow>(sql, "accountUsage", [accountId, namespaceId, window.from.toISOString(), window.to.toISOString()]);
  return row!;
}

/** `namespaceId` null = anywhere in the account. */
export async function findSettlement(sql: Sql, accountId: string, requestId: string, namespaceId: string | null): Promise<SettlementRow | undefined> {
  return runQueryRow<SettlementRow>(sql, "findSettlement", [accountId, requestId, namespaceId]);
}
