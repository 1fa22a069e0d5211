-- Budget and rate-limit counters (src/admission/policy-counters.ts). Admission and the
-- end of grants run as the functions of migration 0024, one round trip per batch of
-- requests on the same counters, so the counter locks are held only while the database
-- works.
--
-- Lock order. Every transaction that changes a counter first locks the admission_counters
-- rows of its keys with lockCounters, in byte order of the key, and only then touches
-- holds, spend buckets or admissions of those keys. Statements that lock several hold
-- rows take them in (grant_id, counter_key) order. No statement here touches wallets or
-- wallet leases, and no wallet statement touches these tables, so no transaction ever
-- waits on both families: they cannot deadlock with each other.

-- name: lockCounters
-- Creates the missing counters and locks every counter of $1, in byte order (the sweep's
-- first statement; the functions do the same). The no-op update takes the lock on an
-- existing row.
insert into admission_counters (counter_key)
select key from unnest($1::text[]) as key order by key collate "C"
on conflict (counter_key) do update set counter_key = excluded.counter_key;

-- name: admitGrants
-- One round trip for a batch of requests on the same clauses: admission_admit_batch
-- (migration 0024) locks, judges each request in order and reserves for the admitted
-- ones. One row per refused request (its 1-based index) naming the clause that refused,
-- then one 'window' row per rate limit: what its window counts after the batch and when
-- its oldest admission leaves (admission_admit_batch_report, migration 0033).
select request_index, refused_clause, clause_index, spent_micro_usd, reserved_micro_usd, retry_after_secs,
       window_requests, window_tokens, reset_secs
  from admission_admit_batch_report($1::text[], $2::bigint[], $3::bigint[],
                             $4::text[], $5::int[], $6::bigint[], $7::int[],
                             $8::text[], $9::int[], $10::bigint[], $11::bigint[], $12::int);

-- name: endGrants
-- Settles ($4 false, charges $2) or releases ($4 true) grants $1, all of counter keys $3.
select admission_end_batch($1::text[], $2::bigint[], $3::text[], $4::boolean);

-- name: renewHolds
-- Keeps the holds of this instance's requests in flight ($1 grant ids) alive. The outer
-- `grant_id = any` lets the update find its rows by index rather than scan every hold.
update admission_holds h
   set expires_at = statement_timestamp() + make_interval(secs => $2::int)
 where h.grant_id = any($1::text[]) and (h.grant_id, h.counter_key) in (
   select grant_id, counter_key from admission_holds where grant_id = any($1::text[]) order by grant_id, counter_key for update);

-- name: countersWithExpiredHolds
select distinct counter_key from admission_holds where expires_at < statement_timestamp() order by counter_key;

-- name: sweepExpiredHolds
-- After lockCounters on $1: the expired holds of those keys (their instance stopped
-- renewing them) count as spent at their whole amount, in the bucket of their start.
-- The request may have been charged before its instance died; counting its ceiling
-- can only refuse early, never let a budget be overspent.
with expired as (
  delete from admission_holds h
   where (h.grant_id, h.counter_key) in (
     select grant_id, counter_key from admission_holds
      where counter_key = any($1::text[]) and expires_at < statement_timestamp()
      order by grant_id, counter_key for update)
  returning h.counter_key, h.amount_micro_usd, h.started_at, h.bucket_secs
), charged as (
  select counter_key, amount_micro_usd as amount,
         to_timestamp((floor(extract(epoch from started_at) / bucket_secs) + 1) * bucket_secs) as bucket_end
    from expired
), bucket_totals as (
  select counter_key, bucket_end, sum(amount)::bigint as amount from charged group by counter_key, bucket_end
), spend as (
  insert into budget_spend (counter_key, bucket_end, spent_micro_usd)
  select counter_key, bucket_end, amount from bucket_totals
  on conflict (counter_key, bucket_end) do update set spent_micro_usd = budget_spend.spent_micro_usd + excluded.spent_micro_usd
), key_totals as (
  select counter_key, sum(amount)::bigint as amount, count(*) as holds from charged group by counter_key
)
update admission_counters c
   set reserved_micro_usd = c.reserved_micro_usd - t.amount,
       spent_micro_usd = c.spent_micro_usd + t.amount
  from key_totals t
 where c.counter_key = t.counter_key
returning c.counter_key, t.holds;

-- name: pruneBudgetSpend
-- Spend buckets that ended before every window ($1 seconds, the longest) can go: the
-- `total` window reads admission_counters.spent_micro_usd, never the buckets.
delete from budget_spend where bucket_end < statement_timestamp() - make_interval(secs => $1::int);

-- name: takeLease
-- Lease $1 on a set of clauses far from their limits (admission_lease_take, migration
-- 0027): true when granted, false (nothing taken) when a clause is too near its limit.
select admission_lease_take($1::text, $2::bigint, $3::int, $4::bigint,
                            $5::text[], $6::int[], $7::bigint[], $8::int[],
                            $9::text[], $10::int[], $11::bigint[], $12::bigint[],
                            $13::int, $14::int, $15::int) as granted;

-- name: endLease
-- Ends lease $1 on keys $2: charges $4 (started in second $3) move to spend, the unused
-- part of its rate-limit rows goes back ($5 requests and $6 tokens were used).
select admission_lease_end($1::text, $2::text[], $3::bigint[], $4::bigint[], $5::int, $6::bigint);
