-- The usage rollups (migrations 0034 and 0035), kept by the metering writer in the transaction that
-- writes the records and ledger entries they sum (src/metering/usage-rollups.ts). Each
-- statement adds deltas summed by the gateway over the rows that transaction inserted, so
-- a retried flush adds only what it inserted, and a rolled-back one nothing. Rows arrive
-- sorted by key: two transactions adding to the same rows lock them in the same order.

-- name: addRequestUsage
-- Per (account, namespace, key, model, provider, UTC day): $1–$6 the key (days as
-- YYYY-MM-DD), $7–$18 the sums in the table's column order. Per (account, namespace, day,
-- capability): $19–$22 the key, $23 the requests. Per (minute, provider, account): $24–$26
-- the key, $27–$29 the requests, succeeded prompt and succeeded cache-read tokens. Per
-- (account, namespace, key, model, provider, UTC hour) (migration 0035): $30–$35 the key,
-- $36–$40 the sums in the table's column order. Per (account, namespace, hour, capability):
-- $41–$44 the key, $45 the requests. One statement, one round trip, for all five tables.
with days as (
  insert into request_usage_days as d (account_id, namespace_id, api_key_id, model_id, provider_id, day, request_count,
    prompt_tokens, completion_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens, spend_micro_usd,
    unknown_charge_count, succeeded_count, succeeded_prompt_tokens, succeeded_completion_tokens, succeeded_reasoning_tokens)
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::date[],
                       $7::int8[], $8::int8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[],
                       $13::int8[], $14::int8[], $15::int8[], $16::int8[], $17::int8[], $18::int8[])
  on conflict (account_id, day, dimensions) do update
     set request_count = d.request_count + excluded.request_count,
         prompt_tokens = d.prompt_tokens + excluded.prompt_tokens,
         completion_tokens = d.completion_tokens + excluded.completion_tokens,
         reasoning_tokens = d.reasoning_tokens + excluded.reasoning_tokens,
         cache_read_tokens = d.cache_read_tokens + excluded.cache_read_tokens,
         cache_write_tokens = d.cache_write_tokens + excluded.cache_write_tokens,
         spend_micro_usd = d.spend_micro_usd + excluded.spend_micro_usd,
         unknown_charge_count = d.unknown_charge_count + excluded.unknown_charge_count,
         succeeded_count = d.succeeded_count + excluded.succeeded_count,
         succeeded_prompt_tokens = d.succeeded_prompt_tokens + excluded.succeeded_prompt_tokens,
         succeeded_completion_tokens = d.succeeded_completion_tokens + excluded.succeeded_completion_tokens,
         succeeded_reasoning_tokens = d.succeeded_reasoning_tokens + excluded.succeeded_reasoning_tokens
), capabilities as (
  insert into request_capability_days as c (account_id, namespace_id, day, capability, request_count)
  select * from unnest($19::text[], $20::text[], $21::date[], $22::text[], $23::int8[])
  on conflict (account_id, day, dimensions) do update
     set request_count = c.request_count + excluded.request_count
), hours as (
  insert into request_usage_hours as h (account_id, namespace_id, api_key_id, model_id, provider_id, hour, request_count,
    prompt_tokens, completion_tokens, spend_micro_usd, unknown_charge_count)
  select * from unnest($30::text[], $31::text[], $32::text[], $33::text[], $34::text[], $35::timestamptz[],
                       $36::int8[], $37::int8[], $38::int8[], $39::int8[], $40::int8[])
  on conflict (account_id, hour, dimensions) do update
     set request_count = h.request_count + excluded.request_count,
         prompt_tokens = h.prompt_tokens + excluded.prompt_tokens,
         completion_tokens = h.completion_tokens + excluded.completion_tokens,
         spend_micro_usd = h.spend_micro_usd + excluded.spend_micro_usd,
         unknown_charge_count = h.unknown_charge_count + excluded.unknown_charge_count
), capability_hours as (
  insert into request_capability_hours as c (account_id, namespace_id, hour, capability, request_count)
  select * from unnest($41::text[], $42::text[], $43::timestamptz[], $44::text[], $45::int8[])
  on conflict (account_id, hour, dimensions) do update
     set request_count = c.request_count + excluded.request_count
)
insert into provider_request_minutes as m (minute, provider_id, account_id, request_count, succeeded_prompt_tokens, succeeded_cache_read_tokens)
select * from unnest($24::timestamptz[], $25::text[], $26::text[], $27::int8[], $28::int8[], $29::int8[])
on conflict (minute, account_id, provider_key) do update
   set request_count = m.request_count + excluded.request_count,
       succeeded_prompt_tokens = m.succeeded_prompt_tokens + excluded.succeeded_prompt_tokens,
       succeeded_cache_read_tokens = m.succeeded_cache_read_tokens + excluded.succeeded_cache_read_tokens;

-- name: addLedgerUsage
-- The `usage` and `pending_debit_recovery` entries just COPYed, summed per (account,
-- namespace, kind): $1–$3 the key, $4 the amount, $5 the entries. Their day is this
-- transaction's: the entries' created_at is its now() (the column default).
insert into ledger_usage_days as d (account_id, namespace_id, day, kind, amount_micro_usd, entry_count)
select t.account_id, t.namespace_id, (now() at time zone 'UTC')::date, t.kind, t.amount, t.entries
  from unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::int8[]) as t(account_id, namespace_id, kind, amount, entries)
on conflict (account_id, day, dimensions) do update
   set amount_micro_usd = d.amount_micro_usd + excluded.amount_micro_usd,
       entry_count = d.entry_count + excluded.entry_count;

-- name: pruneProviderRequestMinutes
-- Minutes before $1 (a day ago): GET /v1/providers reads the last hour only.
delete from provider_request_minutes where minute < $1::timestamptz;
