import type { LedgerUsageTotal, ProviderRequestMinute, RequestCapabilityDay, RequestCapabilityHour, RequestUsageDay, RequestUsageDeltas, RequestUsageHour } from "../db/queries/usage-rollups";
import { storableText } from "../db/storable-text";
import type { LedgerRow, RequestRow } from "./metering-rows";

/**
 * What a flush adds to the usage rollups (migration 0034): the records and ledger entries
 * its transaction inserted, summed per rollup key here, so PostgreSQL upserts a few rows
 * per flush instead of aggregating the batch. The sums are the usage statements' (a
 * record's charge is its own: records written since 0030 have no billing-audit row), and
 * the rows come out sorted by key, so that two transactions adding to the same rows take
 * their locks in one order and cannot deadlock. Text is keyed as it is stored (storableText:
 * NUL replaced, cut at 4,096 characters), so a record's rollup row is the one its stored
 * values group into. The hours (migration 0035) are summed the same way per UTC hour.
 */
export function requestUsageDeltas(rows: readonly RequestRow[]): RequestUsageDeltas {
  const days = new Map<string, RequestUsageDay>();
  const capabilities = new Map<string, RequestCapabilityDay>();
  const minutes = new Map<string, ProviderRequestMinute>();
  const hours = new Map<string, RequestUsageHour>();
  const capabilityHours = new Map<string, RequestCapabilityHour>();
  const times = new RecordTimes();
  for (const row of rows) {
    const { day, hour, minute } = times.of(row);
    const succeeded = row.status === "succeeded";
    const account = storableText(row.account_id);
    const namespace = stored(row.namespace_id);
    const provider = stored(row.provider_id);
    const apiKey = stored(row.api_key_id);
    const model = stored(row.model_id);
    // The same parts in every key, each length-prefixed, so no two keys collide whatever an id holds.
    const owner = keyPart(account) + keyPart(namespace);
    const shape = keyPart(apiKey) + keyPart(model) + keyPart(provider);
    const dayKey = owner + day + shape;
    let sums = days.get(dayKey);
    if (sums === undefined) {
      sums = {
        account_id: account, namespace_id: namespace, api_key_id: apiKey, model_id: model, provider_id: provider, day,
        request_count: 0, prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0,
        spend_micro_usd: 0, unknown_charge_count: 0, succeeded_count: 0, succeeded_prompt_tokens: 0, succeeded_completion_tokens: 0, succeeded_reasoning_tokens: 0,
      };
      days.set(dayKey, sums);
    }
    sums.request_count += 1;
    sums.prompt_tokens += row.prompt_tokens;
    sums.completion_tokens += row.completion_tokens;
    sums.reasoning_tokens += row.reasoning_tokens;
    sums.cache_read_tokens += row.cache_read_tokens;
    sums.cache_write_tokens += row.cache_write_tokens;
    if (row.final_charge_micro_usd === null) sums.unknown_charge_count += 1;
    else sums.spend_micro_usd += row.final_charge_micro_usd;
    if (succeeded) {
      sums.succeeded_count += 1;
      sums.succeeded_prompt_tokens += row.prompt_tokens;
      sums.succeeded_completion_tokens += row.completion_tokens;
      sums.succeeded_reasoning_tokens += row.reasoning_tokens;
    }

    const hourKey = owner + hour + shape;
    let hourSums = hours.get(hourKey);
    if (hourSums === undefined) {
      hourSums = {
        account_id: account, namespace_id: namespace, api_key_id: apiKey, model_id: model, provider_id: provider, hour,
        request_count: 0, prompt_tokens: 0, completion_tokens: 0, spend_micro_usd: 0, unknown_charge_count: 0,
      };
      hours.set(hourKey, hourSums);
    }
    hourSums.request_count += 1;
    hourSums.prompt_tokens += row.prompt_tokens;
    hourSums.completion_tokens += row.completion_tokens;
    if (row.final_charge_micro_usd === null) hourSums.unknown_charge_count += 1;
    else hourSums.spend_micro_usd += row.final_charge_micro_usd;

    // A capability the record names twice counts once, as the aggregate's count(distinct id).
    for (const capability of row.used_capabilities.length === 0 ? NO_CAPABILITIES : new Set(row.used_capabilities.map(storableText))) {
      const key = owner + day + keyPart(capability);
      const count = capabilities.get(key);
      if (count === undefined) capabilities.set(key, { account_id: account, namespace_id: namespace, day, capability, request_count: 1 });
      else count.request_count += 1;
      const inHourKey = owner + hour + keyPart(capability);
      const inHour = capabilityHours.get(inHourKey);
      if (inHour === undefined) capabilityHours.set(inHourKey, { account_id: account, namespace_id: namespace, hour, capability, request_count: 1 });
      else inHour.request_count += 1;
    }

    if (provider !== null) {
      const key = minute + keyPart(account) + keyPart(provider);
      let window = minutes.get(key);
      if (window === undefined) {
        window = { minute, provider_id: provider, account_id: account, request_count: 0, succeeded_prompt_tokens: 0, succeeded_cache_read_tokens: 0 };
        minutes.set(key, window);
      }
      window.request_count += 1;
      if (succeeded) {
        window.succeeded_prompt_tokens += row.prompt_tokens;
        window.succeeded_cache_read_tokens += row.cache_read_tokens;
      }
    }
  }
  return {
    days: sortedByKey(days), capabilities: sortedByKey(capabilities), minutes: sortedByKey(minutes),
    hours: sortedByKey(hours), capabilityHours: sortedByKey(capabilityHours),
  };
}

/** The `usage` and `pending_debit_recovery` entries summed per (account, namespace, kind), sorted. */
export function ledgerUsageTotals(rows: readonly LedgerRow[]): LedgerUsageTotal[] {
  const totals = new Map<string, LedgerUsageTotal>();
  for (const row of rows) {
    if (row.kind !== "usage" && row.kind !== "pending_debit_recovery") continue;
    const account = storableText(row.account_id);
    const namespace = stored(row.namespace_id);
    const key = keyPart(account) + keyPart(namespace) + row.kind;
    const total = totals.get(key);
    if (total === undefined) totals.set(key, { account_id: account, namespace_id: namespace, kind: row.kind, amount_micro_usd: row.amount_micro_usd, entry_count: 1 });
    else {
      total.amount_micro_usd += row.amount_micro_usd;
      total.entry_count += 1;
    }
  }
  return sortedByKey(totals);
}

/**
 * The rows whose ids the retry insert returned (those it inserted, not those an earlier
 * attempt had committed), each id once: a batch holding a record twice inserts it once.
 */
export function insertedRows(rows: readonly RequestRow[], insertedIds: readonly string[]): RequestRow[] {
  const pending = new Set(insertedIds);
  const inserted: RequestRow[] = [];
  for (const row of rows) if (pending.delete(row.id)) inserted.push(row);
  return inserted;
}

const HOUR_MS = 3_600_000;
const NO_CAPABILITIES: readonly string[] = [];

/**
 * One part of a rollup key: its length, a colon, then the value, or "~" for null. Keys are
 * parts laid end to end, so a length prefix keeps two different tuples from ever spelling
 * the same key (an id may hold any character), and every flush sorts them the same way.
 */
function keyPart(value: string | null): string {
  return value === null ? "~" : `${value.length}:${value}`;
}

/**
 * The UTC day, hour and minute a record's created_at rolls up into. A flush's records were
 * created within the same few seconds: a created_at equal to the last one's is not parsed
 * again, and one within the same minute keeps that minute's strings.
 */
class RecordTimes {
  private lastCreatedAt = "";
  private lastMinuteMs = Number.NaN;
  private last = { day: "", hour: "", minute: "" };

  of(row: RequestRow): { day: string; hour: string; minute: string } {
    if (row.created_at === this.lastCreatedAt) return this.last;
    const at = Date.parse(row.created_at);
    if (!Number.isFinite(at)) throw new Error(`request record ${row.id}: created_at is not a timestamp`);
    const minuteMs = Math.floor(at / 60_000) * 60_000;
    if (minuteMs !== this.lastMinuteMs) {
      this.lastMinuteMs = minuteMs;
      this.last = { day: utcDay(at), hour: new Date(Math.floor(at / HOUR_MS) * HOUR_MS).toISOString(), minute: new Date(minuteMs).toISOString() };
    }
    this.lastCreatedAt = row.created_at;
    return this.last;
  }
}

/** YYYY-MM-DD of the UTC day of `ms` (PostgreSQL's date, also for years past 9999). */
function utcDay(ms: number): string {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + 1;
  const day = date.getUTCDate();
  return `${String(year).padStart(4, "0")}-${month < 10 ? "0" : ""}${month}-${day < 10 ? "0" : ""}${day}`;
}

function stored(value: string | null): string | null {
  return value === null ? null : storableText(value);
}

function sortedByKey<Value>(map: Map<string, Value>): Value[] {
  return [...map.keys()].sort().map((key) => map.get(key)!);
}
