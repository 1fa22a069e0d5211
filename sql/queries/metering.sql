-- name: insertRequestRecords
-- A batch of request records as one JSON array parameter; idempotent on the record id
-- (with its created_at: the partitioned table's key, migration 0025).
-- (The first attempt of a flush writes requests and ledger entries with COPY instead:
-- src/metering/metering-sink.ts. These statements are the retry path.) Returns the ids of
-- the records actually inserted: only those are added to the usage rollups.
insert into requests (
  id, request_id, account_id, namespace_id, api_key_id, oauth_token_id, status, status_code, billing_status,
  model_id, provider_id, provider_model_id, routing_profile, funding_source, streamed,
  finish_reason, first_token_kind, prompt_tokens, completion_tokens, reasoning_tokens,
  cache_read_tokens, cache_write_tokens, final_charge_micro_usd, request_duration_ms,
  upstream_duration_ms, generation_duration_ms, ttft_ms, used_capabilities, usage_evidence,
  warnings, attempts, charge_audit, created_at, completed_at)
select id, request_id, account_id, namespace_id, api_key_id, oauth_token_id, status, status_code, billing_status,
  model_id, provider_id, provider_model_id, routing_profile, funding_source, streamed,
  finish_reason, first_token_kind, prompt_tokens, completion_tokens, reasoning_tokens,
  cache_read_tokens, cache_write_tokens, final_charge_micro_usd, request_duration_ms,
  upstream_duration_ms, generation_duration_ms, ttft_ms,
  array(select json_array_elements_text(used_capabilities)), usage_evidence::text, warnings::text, attempts::text, charge_audit::text, created_at, completed_at
from json_to_recordset($1::text::json) as r(
  id text, request_id text, account_id text, namespace_id text, api_key_id text, oauth_token_id text, status text,
  status_code integer, billing_status text, model_id text, provider_id text, provider_model_id text,
  routing_profile text, funding_source text, streamed boolean, finish_reason text,
  first_token_kind text, prompt_tokens integer, completion_tokens integer, reasoning_tokens integer,
  cache_read_tokens integer, cache_write_tokens integer, final_charge_micro_usd bigint,
  request_duration_ms integer, upstream_duration_ms integer, generation_duration_ms integer,
  ttft_ms integer, used_capabilities json, usage_evidence json, warnings json, attempts json,
  charge_audit json, created_at timestamptz, completed_at timestamptz)
on conflict (id, created_at) do nothing
returning id;

-- name: applyLedgerEntries
-- Ledger rows and the wallet change they cause, in one statement: only entries that
-- were actually inserted move the balance (and the usage rollup), so a retried batch can
-- never debit or count twice.
-- A usage entry's charge also leaves the lease it was admitted against, and the
-- reservation shrinks only by what left a lease that still exists (a lease already
-- swept has given its whole amount back).
with inserted as (
  insert into ledger_entries (id, account_id, namespace_id, request_record_id, kind, amount_micro_usd, released_micro_usd, lease_id)
  select id, account_id, namespace_id, request_record_id, kind, amount_micro_usd, released_micro_usd, lease_id
  from json_to_recordset($1::text::json) as e(
    id text, account_id text, namespace_id text, request_record_id text, kind text,
    amount_micro_usd bigint, released_micro_usd bigint, lease_id text)
  on conflict (id) do nothing
  returning account_id, namespace_id, kind, amount_micro_usd, released_micro_usd, lease_id, created_at
), ledger_days as (
  -- The usage rollup of the entries inserted here (migration 0034), as addLedgerUsage does
  -- for COPYed ones; executed although nothing below reads it.
  insert into ledger_usage_days as d (account_id, namespace_id, day, kind, amount_micro_usd, entry_count)
  select account_id, namespace_id, (created_at at time zone 'UTC')::date, kind, sum(amount_micro_usd), count(*)
    from inserted
   where kind in ('usage', 'pending_debit_recovery')
   group by 1, 2, 3, 4
   order by 1, 2, 3, 4
  on conflict (account_id, day, dimensions) do update
     set amount_micro_usd = d.amount_micro_usd + excluded.amount_micro_usd,
         entry_count = d.entry_count + excluded.entry_count
), per_lease as (
  select lease_id, sum(released_micro_usd) as released from inserted where lease_id is not null group by lease_id
), leases as (
  update wallet_leases l set amount_micro_usd = l.amount_micro_usd - p.released
    from per_lease p
   where l.id = p.lease_id
  returning l.account_id, p.released
), amounts as (
  select account_id, sum(amount_micro_usd) as amount, 0::numeric as released from inserted group by account_id
  union all
  select account_id, 0, sum(released) from leases group by account_id
), totals as (
  select account_id, sum(amount) as amount, sum(released) as released from amounts group by account_id
)
update wallets w
   set balance_micro_usd = w.balance_micro_usd + totals.amount,
       reserved_micro_usd = greatest(w.reserved_micro_usd - totals.released, 0),
       updated_at = now()
  from totals
 where w.account_id = totals.account_id;

-- name: applyLedgerTotals
-- The wallet change of a batch of ledger entries that was just COPYed (first attempts
-- only: every entry in it is new, so no per-entry conflict check is needed). Totals are
-- summed by the gateway: $1/$2 the amount per account, $3/$4 what each lease releases.
-- As in applyLedgerEntries, the reservation shrinks only by what left a lease that still
-- exists (a lease already swept has given its whole amount back).
with leases as (
  update wallet_leases l set amount_micro_usd = l.amount_micro_usd - p.released
    from unnest($3::text[], $4::int8[]) as p(lease_id, released)
   where l.id = p.lease_id
  returning l.account_id, p.released
), released as (
  select account_id, sum(released) as released from leases group by account_id
)
update wallets w
   set balance_micro_usd = w.balance_micro_usd + t.amount,
       reserved_micro_usd = greatest(w.reserved_micro_usd - coalesce(r.released, 0), 0),
       updated_at = now()
  from unnest($1::text[], $2::int8[]) as t(account_id, amount)
  left join released r on r.account_id = t.account_id
 where w.account_id = t.account_id;

-- name: insertMeteringDeadLetters
-- Rows isolated from a batch the database refused (see 0012_metering_dead_letters.sql):
-- parallel arrays of the destination table, request record id, escaped row values,
-- SQLSTATE and error message.
insert into metering_dead_letters (table_name, request_record_id, row_values, error_code, error_message)
select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]);

-- name: addRefusedRequestCounts
-- Refusals counted instead of recorded (src/metering/refusal-sampler.ts), added to their
-- minute's totals: one row per account, minute, status, namespace, API key and model
-- (migration 0036).
insert into refused_request_counts as c (account_id, minute, status_code, namespace_id, api_key_id, model_id, count)
select * from unnest($1::text[], $2::timestamptz[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::bigint[])
on conflict (account_id, minute, status_code, dimensions) do update set count = c.count + excluded.count;

-- name: claimRefusalRecord
-- One of account $1's $3 refusal records of minute $2, for whichever process asks
-- (migration 0036): the running count when the claim fits, no row when the minute's sample
-- is full.
insert into refusal_sample_minutes as s (account_id, minute, recorded)
values ($1, $2::timestamptz, 1)
on conflict (account_id, minute) do update set recorded = s.recorded + 1 where s.recorded < $3::int
returning recorded;

-- name: pruneRefusalSampleMinutes
-- Sample minutes before $1 (a day ago): only the current minute's is ever claimed.
delete from refusal_sample_minutes where minute < $1::timestamptz;
