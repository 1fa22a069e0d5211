import type { Sql } from "../../src/db/connect-database";
import type { TimeWindow } from "../../src/db/queries/usage";

/**
 * The usage statements as they were before the usage rollups (migration 0034), over the
 * request records and ledger entries alone: the reference every rollup-backed answer must
 * equal (test/metering/usage-rollups.test.ts, test/db/request-partitions.test.ts). Same
 * parameters as the originals: $1 account, $2 namespace, $3 from, $4 to ($5 the grouping).
 */
export const REFERENCE_NAMESPACE_USAGE = `
with window_requests as (
  select r.id, r.prompt_tokens, r.completion_tokens, r.used_capabilities,
         coalesce(a.charge_micro_usd, r.final_charge_micro_usd) as charge_micro_usd
    from requests r
    left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
   where r.account_id = $1 and r.namespace_id = $2
     and r.created_at >= $3::timestamptz and r.created_at < $4::timestamptz
), capabilities as (
  select capability, count(distinct w.id)::bigint as request_count
    from window_requests w, unnest(w.used_capabilities) as capability
   group by capability
)
select count(*)::bigint as request_count,
       coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens,
       coalesce(sum(completion_tokens), 0)::bigint as completion_tokens,
       coalesce(sum(charge_micro_usd), 0)::bigint as spend_micro_usd,
       count(*) filter (where charge_micro_usd is null)::bigint as billing_anomalies,
       coalesce((select jsonb_object_agg(capability, request_count) from capabilities), '{}'::jsonb) as capability_request_counts
  from window_requests`;

export const REFERENCE_DAILY_USAGE = `
select to_char((r.created_at at time zone 'UTC')::date, 'YYYY-MM-DD') as date,
       case $5::text when 'model' then r.model_id when 'api_key' then r.api_key_id when 'provider' then r.provider_id end as "group",
       count(*)::bigint as request_count,
       coalesce(sum(r.prompt_tokens), 0)::bigint as prompt_tokens,
       coalesce(sum(r.completion_tokens), 0)::bigint as completion_tokens,
       coalesce(sum(coalesce(a.charge_micro_usd, r.final_charge_micro_usd)), 0)::bigint as spend_micro_usd
  from requests r
  left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
 where r.account_id = $1 and r.namespace_id = $2
   and r.created_at >= $3::timestamptz and r.created_at < $4::timestamptz
 group by 1, 2
 order by 1, 2 nulls last`;

export const REFERENCE_ACCOUNT_USAGE = `
with window_requests as (
  select count(*)::bigint as request_count,
         coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens,
         coalesce(sum(completion_tokens), 0)::bigint as completion_tokens,
         count(*) filter (where final_charge_micro_usd is null
                          and not exists (select 1 from billing_audit a
                                           where a.request_record_id = r.id and a.account_id = r.account_id))::bigint as billing_anomalies
    from requests r
   where r.account_id = $1 and ($2::text is null or r.namespace_id = $2::text)
     and r.created_at >= $3::timestamptz and r.created_at < $4::timestamptz
), window_ledger as (
  select coalesce(sum(amount_micro_usd) filter (where kind = 'usage'), 0)::bigint as usage_amount_micro_usd,
         count(*) filter (where kind = 'usage')::bigint as usage_count,
         coalesce(sum(amount_micro_usd) filter (where kind = 'pending_debit_recovery'), 0)::bigint as pending_debit_recovery_amount_micro_usd,
         count(*) filter (where kind = 'pending_debit_recovery')::bigint as pending_debit_recovery_count
    from ledger_entries
   where account_id = $1 and ($2::text is null or namespace_id = $2::text)
     and kind in ('usage', 'pending_debit_recovery')
     and created_at >= $3::timestamptz and created_at < $4::timestamptz
)
select * from window_requests, window_ledger`;

export const REFERENCE_PLATFORM_USAGE = `
select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
       coalesce(model_id, '') as model_id,
       count(*) as request_count,
       coalesce(sum(prompt_tokens), 0)::int8 as prompt_tokens,
       coalesce(sum(completion_tokens), 0)::int8 as completion_tokens,
       coalesce(sum(reasoning_tokens), 0)::int8 as reasoning_tokens
  from requests
 where status = 'succeeded'
   and created_at >= $1
   and created_at < $2
 group by 1, 2
 order by 1, 2`;

export const REFERENCE_PROVIDER_WINDOW = `
select provider_id,
       count(*) filter (where created_at >= $2) as last_minute_count,
       coalesce(sum(cache_read_tokens) filter (where status = 'succeeded'), 0)::int8 as cache_read_tokens,
       coalesce(sum(prompt_tokens) filter (where status = 'succeeded'), 0)::int8 as prompt_tokens
  from requests
 where created_at >= $1
   and provider_id is not null
 group by provider_id
 order by provider_id`;


/** namespaceUsage over the records. */
export async function referenceNamespaceUsage(sql: Sql, accountId: string, namespaceId: string, window: TimeWindow): Promise<unknown> {
  const [row] = await sql.unsafe(REFERENCE_NAMESPACE_USAGE, [accountId, namespaceId, window.from.toISOString(), window.to.toISOString()]);
  return row;
}

/** accountUsage over the records and the ledger. */
export async function referenceAccountUsage(sql: Sql, accountId: string, namespaceId: string | null, window: TimeWindow): Promise<unknown> {
  const [row] = await sql.unsafe(REFERENCE_ACCOUNT_USAGE, [accountId, namespaceId, window.from.toISOString(), window.to.toISOString()]);
  return row;
}

/** platformUsageByDayAndModel over the records. */
export async function referencePlatformUsage(sql: Sql, from: Date, to: Date): Promise<unknown[]> {
  return [...(await sql.unsafe(REFERENCE_PLATFORM_USAGE, [from, to]))];
}
