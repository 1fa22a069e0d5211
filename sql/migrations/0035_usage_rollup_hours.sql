-- two-step: a version still running keeps writing records without adding them to the hour tables, so the namespace and daily usage answers of the new version miss them at a window's edges: stop the old instances before the first new one starts (as for 0034), or run `select usage_rollups_rebuild(null)` once the last old one has stopped
-- Hourly usage rollups (docs/api/usage-and-history.md "Usage reads by day"). With the day
-- rollups of 0034 alone, a window that starts and ends mid-day (the default: the last 30
-- days ending now) still read the records of its two partial days: ~16,700 records at
-- 1,000,000 a namespace over 60 days, 107-169 ms of the namespace, daily and console reads
-- (docs/architecture.md). These tables hold the same sums per UTC hour, so those reads take
-- the whole hours of the partial days from here and only the partial hours at the very
-- edges (at most two) from the records. Kept by the metering writer in the statement that
-- adds the days (sql/queries/usage-rollups.sql), so exact as the days are.
--
-- Only the sums the namespace and daily statements read: the account aggregate and the
-- public statistics met their targets on the days alone and keep reading edge records,
-- so the hours carry no succeeded_* or cache sums, fewer columns for the writer to add.
-- The key and its `dimensions` are the days' (0034 explains the md5).
create table request_usage_hours (
  account_id           text collate "C" not null,
  namespace_id         text collate "C",
  api_key_id           text collate "C",
  model_id             text collate "C",
  provider_id          text collate "C",
  hour                 timestamptz not null,
  request_count        bigint not null,
  prompt_tokens        bigint not null,
  completion_tokens    bigint not null,
  spend_micro_usd      bigint not null,
  unknown_charge_count bigint not null,
  dimensions           text collate "C" not null generated always as (md5(
    coalesce(length(namespace_id)::text || ':' || namespace_id, '-') || coalesce(length(api_key_id)::text || ':' || api_key_id, '-') ||
    coalesce(length(model_id)::text || ':' || model_id, '-') || coalesce(length(provider_id)::text || ':' || provider_id, '-'))) stored
);
-- Reads are (account, hour range), the namespace checked on the rows, as for the days; an
-- upsert changes only sums, never an indexed column (a HOT update).
create unique index request_usage_hours_key on request_usage_hours (account_id, hour, dimensions);

-- The namespace aggregate's capability counts per hour (count(distinct id) per capability).
create table request_capability_hours (
  account_id    text collate "C" not null,
  namespace_id  text collate "C",
  hour          timestamptz not null,
  capability    text not null,
  request_count bigint not null,
  dimensions    text collate "C" not null generated always as (md5(
    coalesce(length(namespace_id)::text || ':' || namespace_id, '-') || length(capability)::text || ':' || capability)) stored
);
create unique index request_capability_hours_key on request_capability_hours (account_id, hour, dimensions);

-- The rebuild of 0034, now also of the hours (an operator's rebuild must leave the two
-- agreeing). Hours are cut in UTC (date_trunc's third argument) whatever the session's
-- time zone: in a zone with a half-hour offset its hours would not be the writer's.
create or replace function usage_rollups_rebuild(p_account text)
returns void
language plpgsql volatile
as $$
begin
  lock table requests in share mode;
  lock table ledger_entries in share mode;
  delete from request_usage_days where p_account is null or account_id = p_account;
  delete from request_capability_days where p_account is null or account_id = p_account;
  delete from provider_request_minutes where p_account is null or account_id = p_account;
  delete from ledger_usage_days where p_account is null or account_id = p_account;
  delete from request_usage_hours where p_account is null or account_id = p_account;
  delete from request_capability_hours where p_account is null or account_id = p_account;

  insert into request_usage_days (account_id, namespace_id, api_key_id, model_id, provider_id, day, request_count,
    prompt_tokens, completion_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, spend_micro_usd,
    unknown_charge_count, succeeded_count, succeeded_prompt_tokens, succeeded_completion_tokens, succeeded_reasoning_tokens)
  select r.account_id, r.namespace_id, r.api_key_id, r.model_id, r.provider_id,
         (r.created_at at time zone 'UTC')::date,
         count(*), sum(r.prompt_tokens), sum(r.completion_tokens), sum(r.reasoning_tokens),
         sum(r.cache_read_tokens), sum(r.cache_write_tokens),
         coalesce(sum(coalesce(a.charge_micro_usd, r.final_charge_micro_usd)), 0),
         count(*) filter (where coalesce(a.charge_micro_usd, r.final_charge_micro_usd) is null),
         count(*) filter (where r.status = 'succeeded'),
         coalesce(sum(r.prompt_tokens) filter (where r.status = 'succeeded'), 0),
         coalesce(sum(r.completion_tokens) filter (where r.status = 'succeeded'), 0),
         coalesce(sum(r.reasoning_tokens) filter (where r.status = 'succeeded'), 0)
    from requests r
    left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
   where p_account is null or r.account_id = p_account
   group by 1, 2, 3, 4, 5, 6;

  insert into request_capability_days (account_id, namespace_id, day, capability, request_count)
  select r.account_id, r.namespace_id, (r.created_at at time zone 'UTC')::date, c.capability, count(distinct r.id)
    from requests r, unnest(r.used_capabilities) as c(capability)
   where p_account is null or r.account_id = p_account
   group by 1, 2, 3, 4;

  insert into provider_request_minutes (minute, provider_id, account_id, request_count, succeeded_prompt_tokens, succeeded_cache_read_tokens)
  select date_trunc('minute', r.created_at), r.provider_id, r.account_id, count(*),
         coalesce(sum(r.prompt_tokens) filter (where r.status = 'succeeded'), 0),
         coalesce(sum(r.cache_read_tokens) filter (where r.status = 'succeeded'), 0)
    from requests r
   where (p_account is null or r.account_id = p_account)
     and r.provider_id is not null
     and r.created_at >= date_trunc('minute', now()) - interval '1 day'
   group by 1, 2, 3;

  insert into ledger_usage_days (account_id, namespace_id, day, kind, amount_micro_usd, entry_count)
  select account_id, namespace_id, (created_at at time zone 'UTC')::date, kind, sum(amount_micro_usd), count(*)
    from ledger_entries
   where (p_account is null or account_id = p_account)
     and kind in ('usage', 'pending_debit_recovery')
   group by 1, 2, 3, 4;
  insert into request_usage_hours (account_id, namespace_id, api_key_id, model_id, provider_id, hour, request_count,
    prompt_tokens, completion_tokens, spend_micro_usd, unknown_charge_count)
  select r.account_id, r.namespace_id, r.api_key_id, r.model_id, r.provider_id, date_trunc('hour', r.created_at, 'UTC'),
         count(*), sum(r.prompt_tokens), sum(r.completion_tokens),
         coalesce(sum(coalesce(a.charge_micro_usd, r.final_charge_micro_usd)), 0),
         count(*) filter (where coalesce(a.charge_micro_usd, r.final_charge_micro_usd) is null)
    from requests r
    left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
   where p_account is null or r.account_id = p_account
   group by 1, 2, 3, 4, 5, 6;

  insert into request_capability_hours (account_id, namespace_id, hour, capability, request_count)
  select r.account_id, r.namespace_id, date_trunc('hour', r.created_at, 'UTC'), c.capability, count(distinct r.id)
    from requests r, unnest(r.used_capabilities) as c(capability)
   where p_account is null or r.account_id = p_account
   group by 1, 2, 3, 4;
end;
$$;

-- Backfill of the hours only: the days of 0034 are already exact.
insert into request_usage_hours (account_id, namespace_id, api_key_id, model_id, provider_id, hour, request_count,
  prompt_tokens, completion_tokens, spend_micro_usd, unknown_charge_count)
select r.account_id, r.namespace_id, r.api_key_id, r.model_id, r.provider_id, date_trunc('hour', r.created_at, 'UTC'),
       count(*), sum(r.prompt_tokens), sum(r.completion_tokens),
       coalesce(sum(coalesce(a.charge_micro_usd, r.final_charge_micro_usd)), 0),
       count(*) filter (where coalesce(a.charge_micro_usd, r.final_charge_micro_usd) is null)
  from requests r
  left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
 group by 1, 2, 3, 4, 5, 6;
insert into request_capability_hours (account_id, namespace_id, hour, capability, request_count)
select r.account_id, r.namespace_id, date_trunc('hour', r.created_at, 'UTC'), c.capability, count(distinct r.id)
  from requests r, unnest(r.used_capabilities) as c(capability)
 group by 1, 2, 3, 4;
analyze request_usage_hours, request_capability_hours;

-- Retention (0034's), now also dropping the hours of the months whose partitions go.
create or replace function request_partitions_drop_expired(p_now timestamptz, p_keep_months int)
returns setof text
language plpgsql volatile
set timezone = 'UTC'
set lock_timeout = '2s'
as $$
declare
  v_cutoff timestamptz;
  v_partition record;
begin
  if p_keep_months is null or p_keep_months < 1 then
    raise exception 'request retention must keep at least one month, got %', p_keep_months;
  end if;
  v_cutoff := p_now - make_interval(months => p_keep_months);
  perform pg_advisory_xact_lock(7301994220118);
  for v_partition in
    select c.relname as name,
           substring(pg_get_expr(c.relpartbound, c.oid) from 'TO \(''([^'']+)''\)')::timestamptz as upper_bound
      from pg_inherits i
      join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'requests'::regclass
     order by 2
  loop
    continue when v_partition.upper_bound is null or v_partition.upper_bound > v_cutoff;
    execute format('drop table %I', v_partition.name);
    return next v_partition.name;
  end loop;
  delete from requests_default where created_at < v_cutoff;
  delete from request_usage_days where day < date_trunc('month', v_cutoff)::date;
  delete from request_capability_days where day < date_trunc('month', v_cutoff)::date;
  delete from request_usage_hours where hour < date_trunc('month', v_cutoff);
  delete from request_capability_hours where hour < date_trunc('month', v_cutoff);
end;
$$;
