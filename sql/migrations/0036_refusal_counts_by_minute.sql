-- two-step: a version still running writes its refusal counts by day, which this table no longer takes: it keeps them in memory and logs a warning until it stops, and they are lost with it. Stop the old instances before the first new one starts, or accept losing the counts of refusals they had no record for
-- Refusals counted instead of recorded, by minute and by what the usage answers group by
-- (docs/architecture.md "Metering", "Refused requests"). Since 0031 only refusals before
-- admission were counted, by account, UTC day and status, and the usage answers did not
-- see them. Refusals at admission (402 for funds or a budget, 403 by a guardrail, 429 by a
-- rate limit) are now counted the same way past the account's sample, so that a tenant
-- hammering its own rate limit cannot grow the request table without bound either; a
-- recorded refusal was counted in every usage answer (`request_count`, daily usage by key
-- and model, the console's overview), so a counted one must be too. Hence the namespace,
-- API key and model of each count, and the minute (a usage window starts and ends at any
-- moment; a count is in a window when its minute starts in it). `count` is still the
-- refusals that have no record of their own. Rows of 0031 keep their day as the minute
-- 00:00 of that day, with no namespace, key or model.
--
-- Only bounded text is keyed: the model is the catalog's (a refusal at admission names a
-- model its routing found), or null for a refusal before admission (the client's model
-- string, unbounded, is never a key). Text columns are unique through `dimensions`, an md5
-- as in the usage rollups (0034).
alter table refused_request_counts
  add column namespace_id text collate "C",
  add column api_key_id text collate "C",
  add column model_id text collate "C",
  add column minute timestamptz;
update refused_request_counts set minute = day::timestamp at time zone 'UTC';
alter table refused_request_counts
  drop constraint refused_request_counts_pkey,
  drop column day,
  alter column minute set not null,
  add column dimensions text collate "C" not null generated always as (md5(
    coalesce(length(namespace_id)::text || ':' || namespace_id, '-') || coalesce(length(api_key_id)::text || ':' || api_key_id, '-') ||
    coalesce(length(model_id)::text || ':' || model_id, '-'))) stored;
-- Usage reads: (account, minute range), the namespace checked on the rows.
create unique index refused_request_counts_key on refused_request_counts (account_id, minute, status_code, dimensions);

-- Each account's sample of refusals with a record, per minute, for every server process and
-- instance at once: a process claims one of the minute's REFUSED_RECORDS_PER_MINUTE records
-- with an upsert that returns the running count, and stops asking (counts locally) for the
-- rest of the minute once the sample is full. So an account gets at most the bound of
-- records a minute however many processes serve it, for at most bound + one round trip
-- per process and minute. Rows older than a day are pruned (src/db/request-partitions.ts).
create table refusal_sample_minutes (
  account_id text collate "C" not null,
  minute     timestamptz not null,
  recorded   integer not null,
  primary key (account_id, minute)
);

-- Retention drops the counts with the months of records they stand beside.
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
  delete from refused_request_counts where minute < date_trunc('month', v_cutoff);
end;
$$;
