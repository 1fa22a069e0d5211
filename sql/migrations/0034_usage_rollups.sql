-- two-step: a version still running keeps writing records without adding them to these tables, so usage answers of the new version miss them: stop the old instances before the first new one starts (as for 0025), or run `select usage_rollups_rebuild(null)` once the last old one has stopped
-- Usage rollups (README "Request history and usage API", "Usage reads by day"). Every
-- usage answer used to aggregate the request records of its window, so its cost grew with
-- a tenant's traffic (a 30-day namespace usage of 500,000 records: ~464 ms). These tables
-- hold the same sums per UTC day (and, for the providers' last hour, per minute), kept by
-- the metering writer in the transaction that writes the records (src/metering/
-- usage-rollups.ts), so they are exact, never eventual. A read takes its whole days from
-- here and the partial days at its edges from the records, so no answer changed.
--
-- Every sum the usage statements compute is here, nothing else. Token counts and charges
-- are sums over the records of the key; a record's charge is the one the usage answers use
-- (the billing-audit charge of records written before 0030, else the record's), a null
-- charge is counted in unknown_charge_count and adds nothing to spend_micro_usd. The
-- statistics count succeeded requests only, hence the succeeded_* sums.
-- The key's text columns are unique through `dimensions`, an md5 of each of them
-- length-prefixed (null its own value, as GROUP BY puts nulls in a group of their own), not
-- the text itself: a model id is the client's, up to 4,096 characters (src/db/storable-text.ts),
-- too long for a B-tree entry, and a key PostgreSQL refused would dead-letter its record.
create table request_usage_days (
  account_id                  text collate "C" not null,
  namespace_id                text collate "C",
  api_key_id                  text collate "C",
  model_id                    text collate "C",
  provider_id                 text collate "C",
  day                         date not null,
  request_count               bigint not null,
  prompt_tokens               bigint not null,
  completion_tokens           bigint not null,
  reasoning_tokens            bigint not null,
  cache_read_tokens           bigint not null,
  cache_write_tokens          bigint not null,
  spend_micro_usd             bigint not null,
  unknown_charge_count        bigint not null,
  succeeded_count             bigint not null,
  succeeded_prompt_tokens     bigint not null,
  succeeded_completion_tokens bigint not null,
  succeeded_reasoning_tokens  bigint not null,
  dimensions                  text collate "C" not null generated always as (md5(
    coalesce(length(namespace_id)::text || ':' || namespace_id, '-') || coalesce(length(api_key_id)::text || ':' || api_key_id, '-') ||
    coalesce(length(model_id)::text || ':' || model_id, '-') || coalesce(length(provider_id)::text || ':' || provider_id, '-'))) stored
);
-- Namespace and account reads: (account, day range), the namespace checked on the rows. Only
-- the sums change on an upsert, never an indexed column: a HOT update, no index touched.
create unique index request_usage_days_key on request_usage_days (account_id, day, dimensions);
-- The public statistics read every account's rows of their days.
create index request_usage_days_day on request_usage_days (day);

-- The namespace aggregate's capability counts: requests per capability they used (a
-- capability named twice by one request counts once, as count(distinct id) does).
create table request_capability_days (
  account_id    text collate "C" not null,
  namespace_id  text collate "C",
  day           date not null,
  capability    text not null,
  request_count bigint not null,
  dimensions    text collate "C" not null generated always as (md5(
    coalesce(length(namespace_id)::text || ':' || namespace_id, '-') || length(capability)::text || ':' || capability)) stored
);
create unique index request_capability_days_key on request_capability_days (account_id, day, dimensions);

-- GET /v1/providers reads the last hour, a window that starts and ends mid-hour, so per
-- minute: whole minutes from here, at most two minutes of records at its edges. Kept by
-- account too, so that the writer's connections, which split rows by account, never update
-- the same row. No latency here: the providers' p50 comes from the in-memory endpoint
-- statistics, never from SQL. Rows older than a day are pruned (src/db/request-partitions.ts).
create table provider_request_minutes (
  minute                      timestamptz not null,
  provider_id                 text collate "C" not null,
  account_id                  text collate "C" not null,
  request_count               bigint not null,
  succeeded_prompt_tokens     bigint not null,
  succeeded_cache_read_tokens bigint not null,
  provider_key                text collate "C" not null generated always as (md5(provider_id)) stored
);
create unique index provider_request_minutes_key on provider_request_minutes (minute, account_id, provider_key);

-- The account aggregate's ledger part: `usage` and `pending_debit_recovery` entries per
-- UTC day of their created_at. Not pruned: the ledger is not either.
create table ledger_usage_days (
  account_id       text collate "C" not null,
  namespace_id     text collate "C",
  day              date not null,
  kind             text not null,
  amount_micro_usd bigint not null,
  entry_count      bigint not null,
  dimensions       text collate "C" not null generated always as (md5(
    coalesce(length(namespace_id)::text || ':' || namespace_id, '-') || kind)) stored
);
create unique index ledger_usage_days_key on ledger_usage_days (account_id, day, dimensions);

-- Recomputes the rollups of one account ($1), or of every account (null), from the records
-- and the ledger: the backfill below, and for an operator after records were changed by
-- hand (README). Writers are held off meanwhile (SHARE locks conflict with their inserts),
-- so no flush commits between the delete and the sums. Minutes only for the last day: the
-- providers' view reads an hour, and older minutes are pruned anyway.
create function usage_rollups_rebuild(p_account text)
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
end;
$$;

select usage_rollups_rebuild(null);
analyze request_usage_days, request_capability_days, provider_request_minutes, ledger_usage_days;

-- Retention (README "Growth"): the days of the months whose partitions are dropped go from
-- the rollups in the same transaction. A month's partition is dropped when it ended at
-- least p_keep_months before p_now, i.e. every month before the cutoff's, so the rollups
-- keep the days from the start of the cutoff's month. (A record that waited in the default
-- partition and is older than the cutoff is deleted while its day, in the cutoff's month,
-- stays counted: that needs a month whose partition was never created.)
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
end;
$$;
