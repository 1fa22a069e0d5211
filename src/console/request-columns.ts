import type { RequestRecordEnvelope } from "../management/usage/usage-service";
import { formatCount, formatUsd } from "./format";

/** How a request was paid for, in words. */
export const FUNDING: Record<string, string> = { cloud_credit: "Wallet", byok: "Own key (BYOK)" };

/** Names of the namespace's API keys by id, for the Key column. */
export type KeyNames = ReadonlyMap<string, string>;

/** The request's charge: an unknown charge is never shown as free. */
export function chargeText(record: RequestRecordEnvelope): string {
  if (record.final_charge_micro_usd !== null) return formatUsd(record.final_charge_micro_usd);
  return record.billing_status === "not_charged" ? "not charged" : "unknown";
}

/** Who made the request: the key's name, an OAuth grant, or nothing known (records older than attribution). */
export function credentialText(record: RequestRecordEnvelope, keys: KeyNames): string {
  if (record.api_key_id) return keys.get(record.api_key_id) ?? `key ${record.api_key_id}`;
  if (record.oauth_token_id) return `OAuth grant ${record.oauth_token_id}`;
  return "—";
}

/**
 * Who paid. A wallet request charged nothing (refused before any provider answered, or
 * with no usage) is "not charged": the record's funding source is only the one admission
 * chose, and "Wallet" would read as a debit that never happened.
 */
export function paidByText(record: RequestRecordEnvelope): string {
  if (record.funding_source === null) return "—";
  if (record.funding_source === "cloud_credit" && record.billing_status === "not_charged") return "not charged";
  return FUNDING[record.funding_source] ?? record.funding_source;
}

export function durationText(ms: number | null): string {
  return ms === null ? "—" : `${formatCount(ms)} ms`;
}

/** Status and HTTP code in one cell: `failed 402`. */
export function statusText(record: RequestRecordEnvelope): string {
  return `${record.status} ${record.status_code}`;
}
