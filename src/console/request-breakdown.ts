import type { UnrecordedRefusalRow } from "../db/queries/usage";
import type { RequestRecordEnvelope } from "../management/usage/usage-service";

export interface RequestBreakdown {
  /** Requests counted, newest first. */
  counted: number;
  /** False when the window holds more requests than were counted. */
  complete: boolean;
  /** Refusals and errors by kind, most frequent first. */
  kinds: { kind: string; count: number }[];
  /** Failed requests (refusals included), by the API key that made them. */
  failedByKey: Map<string, number>;
  wallet: { requests: number; spendMicroUsd: number };
  byok: { requests: number; promptTokens: number; completionTokens: number };
}

const REFUSALS: Record<number, string> = { 402: "Refused: budget", 429: "Refused: rate limit", 403: "Refused: guardrail" };

/** What went wrong with a request that did not succeed, in words a person can group by. */
export function failureKind(record: RequestRecordEnvelope): string {
  if (record.refused_by) return REFUSALS[record.status_code] ?? "Refused by a policy";
  if (record.status === "cancelled") return "Cancelled by the client";
  if (record.status_code === 402) return "Wallet without funds";
  if (record.status_code === 429) return "Rate limited upstream";
  if (record.status_code >= 500) return `Upstream or gateway error (${record.status_code})`;
  return `Failed (${record.status_code})`;
}

/**
 * Counts the window's requests by how they ended and who paid, reading the history's pages
 * (newest first) up to `maxRows` requests; past that it stops reading and says so.
 */
export async function requestBreakdown(pages: AsyncIterator<readonly RequestRecordEnvelope[]>, maxRows: number): Promise<RequestBreakdown> {
  const kinds = new Map<string, number>();
  const breakdown: RequestBreakdown = { counted: 0, complete: true, kinds: [], failedByKey: new Map(), wallet: { requests: 0, spendMicroUsd: 0 }, byok: { requests: 0, promptTokens: 0, completionTokens: 0 } };
  reading: for (let page = await pages.next(); !page.done; page = await pages.next()) {
    for (const record of page.value) {
      if (breakdown.counted === maxRows) {
        breakdown.complete = false;
        await pages.return?.(undefined);
        break reading;
      }
      breakdown.counted++;
      if (record.status !== "succeeded") {
        kinds.set(failureKind(record), (kinds.get(failureKind(record)) ?? 0) + 1);
        if (record.status === "failed" && record.api_key_id) breakdown.failedByKey.set(record.api_key_id, (breakdown.failedByKey.get(record.api_key_id) ?? 0) + 1);
      }
      if (record.funding_source === "byok") {
        breakdown.byok.requests++;
        breakdown.byok.promptTokens += record.prompt_tokens;
        breakdown.byok.completionTokens += record.completion_tokens;
      } else if (record.funding_source === "cloud_credit") {
        breakdown.wallet.requests++;
        breakdown.wallet.spendMicroUsd += record.final_charge_micro_usd ?? 0;
      }
    }
  }
  breakdown.kinds = [...kinds].map(([kind, count]) => ({ kind, count })).sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
  return breakdown;
}

const UNRECORDED: Record<number, string> = { 402: "funds or budget", 403: "guardrail", 429: "rate limit" };

/** The kind of refusals counted without a record of their own: by status, as no record says more. */
export function unrecordedKind(statusCode: number): string {
  return `Refused: ${UNRECORDED[statusCode] ?? `invalid request (${statusCode})`}, counted without a record`;
}

/**
 * Adds the window's refusals that were counted instead of recorded (past each account's
 * sample of refusal records a minute, src/metering/refusal-sampler.ts) to the breakdown's
 * kinds and failures by key: the history holds only the sample, the counts the rest.
 */
export function withUnrecordedRefusals(breakdown: RequestBreakdown, rows: readonly UnrecordedRefusalRow[]): RequestBreakdown {
  if (rows.length === 0) return breakdown;
  const kinds = new Map(breakdown.kinds.map((entry) => [entry.kind, entry.count]));
  const failedByKey = new Map(breakdown.failedByKey);
  for (const row of rows) {
    const kind = unrecordedKind(row.status_code);
    kinds.set(kind, (kinds.get(kind) ?? 0) + row.count);
    if (row.api_key_id) failedByKey.set(row.api_key_id, (failedByKey.get(row.api_key_id) ?? 0) + row.count);
  }
  return {
    ...breakdown,
    failedByKey,
    kinds: [...kinds].map(([kind, count]) => ({ kind, count })).sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind)),
  };
}
