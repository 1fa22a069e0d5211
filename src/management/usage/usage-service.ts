import {
  accountUsage,
  dailyNamespaceUsage,
  findNamespaceRequest,
  findNamespaceRequestPosition,
  findSettlement,
  listNamespaceRequests,
  namespaceUsage,
  unrecordedRefusals,
  type UnrecordedRefusalRow,
  type DailyUsageGrouping,
  type ListingPosition,
  type RequestDetailRow,
  type RequestHistoryFilters,
  type DailyUsageRow,
  type RequestRecordRow,
  type SettlementRow,
} from "../../db/queries/usage";
import { settlementUsage, type SettlementUsage } from "../../metering/usage-evidence";
import { badRequest, notFound } from "../../errors/api-error";
import type { Principal } from "../../auth/principal";
import type { Services } from "../../services";
import type { Tenant } from "../../identity/tenant";
import type { HistoryPage, UsageWindow } from "./query-params";

/**
 * What the usage service uses: the database, and this instance's requests not yet written
 * (for settlement receipts). History and usage read on the read pool (statement timeout,
 * apart from admission's connections, and on a replica a moment behind the primary when
 * DATABASE_READ_URL is set: docs/operations.md "A read replica"); the settlement receipt
 * reads the primary, since a client asks for it right after its request's record is written.
 */
export type UsageServiceDeps = Pick<Services, "db" | "pendingSettlements">;

/**
 * One request record, every field the request history shows; never the prompt or the
 * response. The stored row with its timestamps as RFC 3339 strings; final_charge_micro_usd is null
 * while the charge is unknown (never reported as 0).
 */
export type RequestRecordEnvelope = Omit<RequestRecordRow, "created_at" | "completed_at" | "refusal" | "routing_preset" | "keyset_created_at"> & {
  created_at: string;
  completed_at: string;
  /** Only on a request a policy refused (docs/api/policies.md "Policies"): which one, and why. Other records carry exactly the history's documented fields. */
  refused_by?: { policy_id: string; reason: string };
  /** Only on a request that named a routing preset (`@<name>`): its name. */
  routing_preset?: string;
};

export function requestRecordEnvelope(row: RequestRecordRow): RequestRecordEnvelope {
  return {
    id: row.id,
    request_id: row.request_id,
    api_key_id: row.api_key_id,
    oauth_token_id: row.oauth_token_id,
    billing_status: row.billing_status,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at.toISOString(),
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    final_charge_micro_usd: row.final_charge_micro_usd,
    finish_reason: row.finish_reason,
    first_token_kind: row.first_token_kind,
    funding_source: row.funding_source,
    generation_duration_ms: row.generation_duration_ms,
    request_duration_ms: row.request_duration_ms,
    upstream_duration_ms: row.upstream_duration_ms,
    ttft_ms: row.ttft_ms,
    model_id: row.model_id,
    provider_id: row.provider_id,
    routing_profile: row.routing_profile,
    status: row.status,
    status_code: row.status_code,
    streamed: row.streamed,
    used_capabilities: row.used_capabilities,
    usage_evidence: row.usage_evidence,
    ...(row.refusal ? { refused_by: { policy_id: row.refusal.field ?? "", reason: row.refusal.message } } : {}),
    ...(row.routing_preset ? { routing_preset: row.routing_preset } : {}),
  };
}

/** GET …/requests: a page of records, and where the next one starts (`after=<next_after>`), null when none follows. */
export interface RequestListing {
  data: RequestRecordEnvelope[];
  limit: number;
  offset: number;
  next_after: string | null;
}

/**
 * The answer to an `after` that names no record of the namespace: a missing id and another
 * namespace's or tenant's are the same words, so the answer tells nobody which it was.
 */
export const UNKNOWN_AFTER = "after names no record of this namespace's history: pass the next_after of a page this namespace listed";

/**
 * One page of the namespace's history, newest first, narrowed by the filters (none: every
 * record). With `page.after`, the page starts just after that record ((created_at, id)
 * descending, through the history's index, whatever the depth); the offset then counts from
 * there. The record sets the position only: it need not match the filters. One record more
 * than the page is read, so `next_after` is null exactly when nothing follows, and a client
 * never asks for an empty last page.
 */
export async function listRequests(deps: UsageServiceDeps, tenant: Tenant, page: HistoryPage, filters: RequestHistoryFilters = {}): Promise<RequestListing> {
  let position: ListingPosition | undefined;
  if (page.after !== undefined) {
    position = await findNamespaceRequestPosition(deps.db.read, tenant.accountId, tenant.namespaceId, page.after);
    if (position === undefined) throw badRequest(UNKNOWN_AFTER);
  }
  const rows = await listNamespaceRequests(deps.db.read, tenant.accountId, tenant.namespaceId, page.limit + 1, page.offset, filters, position);
  const data = rows.slice(0, page.limit).map(requestRecordEnvelope);
  return { data, limit: page.limit, offset: page.offset, next_after: rows.length > page.limit ? data.at(-1)!.id : null };
}

/**
 * Every record of the namespace matching the filters, newest first, a page at a time: for
 * an export of a whole filtered history (the console's CSV), streamed as it is read. Each
 * page starts where the previous one ended (keyset, never an offset), so the thousandth
 * page costs what the first does, and records written meanwhile do not shift it.
 */
export async function* eachRequestPage(deps: UsageServiceDeps, tenant: Tenant, filters: RequestHistoryFilters = {}, pageSize = 500): AsyncGenerator<RequestRecordEnvelope[]> {
  let after: ListingPosition | undefined;
  for (;;) {
    const rows = await listNamespaceRequests(deps.db.read, tenant.accountId, tenant.namespaceId, pageSize, 0, filters, after);
    if (rows.length === 0) return;
    yield rows.map(requestRecordEnvelope);
    if (rows.length < pageSize) return;
    const last = rows.at(-1)!;
    after = { createdAt: last.keyset_created_at!, id: last.id };
  }
}

/** GET …/requests/{id}: the history's record, plus every warning and every attempt. */
export type RequestDetailEnvelope = RequestRecordEnvelope & Pick<RequestDetailRow, "warnings" | "attempts">;

/** One record of the namespace by its record id (`rq_…`); another namespace's or tenant's is the 404 of a missing one. */
export async function requestDetail(deps: UsageServiceDeps, tenant: Tenant, recordId: string): Promise<RequestDetailEnvelope> {
  const row = await findNamespaceRequest(deps.db.read, tenant.accountId, tenant.namespaceId, recordId);
  if (!row) throw notFound("request");
  return { ...requestRecordEnvelope(row), warnings: row.warnings, attempts: row.attempts };
}

/**
 * The namespace usage aggregate (GET …/usage), plus `billing_anomalies`: the requests
 * of the window whose charge is unknown (null). They add nothing to spend, and are
 * counted so an unknown charge is never mistaken for a free one.
 */
export interface NamespaceUsageEnvelope {
  from: string;
  to: string;
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_micro_usd: number;
  capability_request_counts: Record<string, number>;
  billing_anomalies: number;
}

export async function namespaceUsageAggregate(deps: UsageServiceDeps, tenant: Tenant, window: UsageWindow): Promise<NamespaceUsageEnvelope> {
  const row = await namespaceUsage(deps.db.read, tenant.accountId, tenant.namespaceId, window);
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    request_count: row.request_count,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    spend_micro_usd: row.spend_micro_usd,
    capability_request_counts: row.capability_request_counts,
    billing_anomalies: row.billing_anomalies,
  };
}

/**
 * One UTC day's usage, of one group when split, as GET …/usage/daily answers it and the
 * console's overview charts it. The query selects exactly these columns, so its rows are
 * these objects as they come.
 */
export type DailyUsage = DailyUsageRow;

/** How many refusals of one status, by one API key (null: no key), went without a record. */
export interface UnrecordedRefusals {
  apiKeyId: string | null;
  statusCode: number;
  count: number;
}

/**
 * The namespace's refusals over the window counted without a record of their own (past
 * each account's sample of refusal records a minute, src/metering/refusal-sampler.ts), by
 * API key and status: the history holds only the sample.
 */
export async function unrecordedRefusalCounts(deps: UsageServiceDeps, tenant: Tenant, window: UsageWindow): Promise<UnrecordedRefusals[]> {
  const rows: UnrecordedRefusalRow[] = await unrecordedRefusals(deps.db.read, tenant.accountId, tenant.namespaceId, window);
  return rows.map((row) => ({ apiKeyId: row.api_key_id, statusCode: row.status_code, count: row.count }));
}

/** GET …/usage/daily (docs/api/usage-and-history.md "Request history and usage API"). */
export interface DailyUsageEnvelope {
  from: string;
  to: string;
  group_by: DailyUsageGrouping;
  data: DailyUsage[];
}

/**
 * The namespace's usage by UTC day over [from, to), split by model, API key or
 * provider (the group; null without group_by, and for requests without one: an OAuth
 * token's request has no API key). Days without requests are left out. Its charges are
 * the namespace aggregate's, so the sums over `data` equal it for the same window.
 */
export async function dailyUsage(deps: UsageServiceDeps, tenant: Tenant, window: UsageWindow, groupBy: DailyUsageGrouping): Promise<DailyUsageEnvelope> {
  const data: DailyUsage[] = await dailyNamespaceUsage(deps.db.read, tenant.accountId, tenant.namespaceId, window, groupBy);
  return { from: window.from.toISOString(), to: window.to.toISOString(), group_by: groupBy, data };
}

/**
 * The account usage aggregate (GET /v1/usage). Its sources are the usage and
 * pending_debit_recovery ledger entries and the request rows of the window; the
 * fields are Switchyard's own:
 *
 *   from, to            the window, from inclusive, to exclusive (RFC 3339)
 *   namespace_id        null: the whole account (every namespace, archived ones
 *                       included, whose history is detached but still the
 *                       account's); a namespace-bound credential sees only its own
 *                       namespace and gets its id here
 *   request_count, prompt_tokens, completion_tokens
 *                       sums over the request rows created in the window
 *   billing_anomalies   those of them whose charge is unknown (null)
 *   spend_micro_usd     what the wallet was debited for usage in the window, as a
 *                       positive number: ledger.usage_micro_usd +
 *                       ledger.pending_debit_recovery_micro_usd
 *   ledger.usage_micro_usd, ledger.usage_count
 *                       the `usage` debit entries (sum negated: debits are stored
 *                       negative), one per settled wallet-funded request
 *   ledger.pending_debit_recovery_micro_usd, ledger.pending_debit_recovery_count
 *                       entries of requests whose charge was unknown at settlement:
 *                       the count shows how many debits are awaiting recovery, the
 *                       amount what has been recovered (0 until then)
 *
 * Ledger entries fall in the window by their own created_at (when the debit was
 * booked, a few milliseconds after the request was created), request rows by theirs.
 */
export interface AccountUsageEnvelope {
  from: string;
  to: string;
  namespace_id: string | null;
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  spend_micro_usd: number;
  billing_anomalies: number;
  ledger: {
    usage_micro_usd: number;
    usage_count: number;
    pending_debit_recovery_micro_usd: number;
    pending_debit_recovery_count: number;
  };
}

export async function accountUsageAggregate(deps: UsageServiceDeps, principal: Principal, window: UsageWindow): Promise<AccountUsageEnvelope> {
  const row = await accountUsage(deps.db.read, principal.accountId, principal.namespaceId, window);
  // Debits are negative in the ledger; spend is reported as a positive amount (0, never -0).
  const usageMicroUsd = 0 - row.usage_amount_micro_usd;
  const recoveredMicroUsd = 0 - row.pending_debit_recovery_amount_micro_usd;
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    namespace_id: principal.namespaceId,
    request_count: row.request_count,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    spend_micro_usd: usageMicroUsd + recoveredMicroUsd,
    billing_anomalies: row.billing_anomalies,
    ledger: {
      usage_micro_usd: usageMicroUsd,
      usage_count: row.usage_count,
      pending_debit_recovery_micro_usd: recoveredMicroUsd,
      pending_debit_recovery_count: row.pending_debit_recovery_count,
    },
  };
}

export type SettlementState = "pending" | "computed" | "not_charged" | "unknown";

/** GET /v1/requests/{request_id}/settlement: where one request's charge stands. */
export interface SettlementReceipt {
  request_id: string;
  state: SettlementState;
  model_id: string | null;
  provider_id: string | null;
  usage: SettlementUsage;
  /** Present (≥ 0) iff state is "computed", else null. */
  final_charge_micro_usd: number | null;
}

export function settlementReceipt(requestId: string, row: SettlementRow): SettlementReceipt {
  const charge = row.charge_micro_usd;
  let state: SettlementState;
  if (row.billing_status === "computed" && charge !== null && charge >= 0) state = "computed";
  else if (row.billing_status === "not_charged") state = "not_charged";
  // "unknown", "legacy_unknown", or a computed status without a charge to show.
  else state = "unknown";
  return {
    request_id: requestId,
    state,
    model_id: row.model_id,
    provider_id: row.provider_id,
    usage: settlementUsage({
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      reasoningTokens: row.reasoning_tokens,
      cacheReadTokens: row.cache_read_tokens,
      cacheWriteTokens: row.cache_write_tokens,
    }),
    final_charge_micro_usd: state === "computed" ? charge : null,
  };
}

/**
 * The settlement receipt of the newest request with this client-visible request id,
 * visible only within the caller's account and, for a namespace-bound credential,
 * its namespace; anything else is the same 404 as an id never seen.
 *
 * A request this instance is still serving, or whose record waits for the next
 * write-buffer flush, is newer than any record: it is "pending", with no charge and
 * zero usage yet. (Another instance knows it only once its record is written.)
 */
export async function findSettlementReceipt(deps: UsageServiceDeps, principal: Principal, requestId: string): Promise<SettlementReceipt> {
  const inFlight = deps.pendingSettlements.find(principal.accountId, requestId, principal.namespaceId);
  if (inFlight !== undefined) {
    return {
      request_id: requestId,
      state: "pending",
      model_id: inFlight.modelId,
      provider_id: inFlight.providerId,
      usage: settlementUsage({}),
      final_charge_micro_usd: null,
    };
  }
  const row = await findSettlement(deps.db.sql, principal.accountId, requestId, principal.namespaceId);
  if (!row) throw notFound("request");
  return settlementReceipt(requestId, row);
}
