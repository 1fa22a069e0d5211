-- Budget and rate-limit counters (src/admission/policy-counters.ts).
--
-- Lock order. Every transaction that changes a counter first locks the admission_counters
-- rows of its keys with lockCounters, in byte order of the key, and only then touches
-- holds, spend buckets or admissions of those keys. Statements that lock several hold
-- rows take them in (grant_id, counter_key) order. No statement here touches wallets or
-- wallet leases, and no wallet statement touches these tables, so no transaction ever
-- waits on both families: they cannot deadlock with each other.

-- name: lockCounters
-- Creates the missing counters and locks every counter of $1 (sorted by the caller, and
-- again here), in that order. The no-op update is what takes the lock on an existing row.
insert into admission_counters (counter_key)
select key from unnest($1::text[]) as key order by key collate "C"
on conflict (counter_key) do update set counter_key = excluded.counter_key;

-- name: counterWindowState
-- After lockCounters, in the same transaction: this statement's snapshot starts after the
-- locks were granted, so it sees every settlement and admission committed before them.
-- Prunes the admissions that left each rate limit's window ($3 keys, $4 window seconds),
-- and returns for every key of $1 (budgets, $2 window seconds) and $3: what is reserved,
-- spent in total and in the budget's window (whole buckets ending inside it), the
-- admissions and tokens still in the rate limit's window, and the time it was judged at.
with now_ as (
  select statement_timestamp() as at
), pruned as (
  delete from rate_limit_admissions a
   using unnest($3::text[], $4::int[]) as r(key, secs), now_
   where a.counter_key = r.key and a.admitted_at <= now_.at - make_interval(secs => r.secs)
  returning a.counter_key, a.tokens
), pruned_totals as (
  select counter_key, count(*)::bigint as requests, sum(tokens)::bigint as tokens from pruned group by counter_key
), recounted as (
  update admission_counters c
     set window_requests = c.window_requests - p.requests, window_tokens = c.window_tokens - p.tokens
    from pruned_totals p
   where c.counter_key = p.counter_key
  returning c.counter_key, c.window_requests, c.window_tokens
), budget_windows as (
  select b.key, coalesce(sum(s.spent_micro_usd), 0)::bigint as spent
    from unnest($1::text[], $2::int[]) as b(key, secs)
    cross join now_
    left join budget_spend s on s.counter_key = b.key and s.bucket_end > now_.at - make_interval(secs => b.secs)
   group by b.key
)
select c.counter_key,
       c.reserved_micro_usd,
       c.spent_micro_usd,
       coalesce(w.spent, 0)::bigint as window_spent_micro_usd,
       coalesce(u.window_requests, c.window_requests) as window_requests,
       coalesce(u.window_tokens, c.window_tokens) as window_tokens,
       now_.at::text as judged_at
  from admission_counters c
  cross join now_
  left join recounted u on u.counter_key = c.counter_key
  left join budget_windows w on w.key = c.counter_key
 where c.counter_key = any($1::text[]) or c.counter_key = any($3::text[]);

-- name: rateLimitRoomAt
-- After counterWindowState on key $1 (window $2 seconds), judged at $5: in how many whole
-- seconds the oldest admissions have left the window so that $3 more requests and $4 more
-- tokens are free. No row: no amount of waiting frees that much.
with ordered as (
  select admitted_at,
         row_number() over w as requests,
         sum(tokens) over w as tokens
    from rate_limit_admissions
   where counter_key = $1
  window w as (order by admitted_at, grant_id rows between unbounded preceding and current row)
)
select ceil(extract(epoch from (admitted_at + make_interval(secs => $2::int) - $5::timestamptz)))::int as wait_secs
  from ordered
 where requests >= $3::bigint and tokens >= $4::bigint
 order by admitted_at
 limit 1;

-- name: applyAdmission
-- After counterWindowState judged room for every clause: the holds of grant $1 (budget
-- keys $2, amounts $3, bucket widths $4, expiring $8 seconds after $7) and its
-- admissions (rate keys $5, tokens $6, at $7), added to their counters.
with holds as (
  insert into admission_holds (grant_id, counter_key, amount_micro_usd, started_at, bucket_secs, expires_at)
  select $1, b.key, b.amount, $7::timestamptz, b.secs, statement_timestamp() + make_interval(secs => $8::int)
    from unnest($2::text[], $3::bigint[], $4::int[]) as b(key, amount, secs)
  returning counter_key, amount_micro_usd
), admitted as (
  insert into rate_limit_admissions (counter_key, admitted_at, grant_id, tokens)
  select r.key, $7::timestamptz, $1, r.tokens
    from unnest($5::text[], $6::bigint[]) as r(key, tokens)
  returning counter_key, tokens
), deltas as (
  select counter_key, amount_micro_usd as reserved, 0::bigint as requests, 0::bigint as tokens from holds
  union all
  select counter_key, 0::bigint, 1::bigint, tokens from admitted
)
update admission_counters c
   set reserved_micro_usd = c.reserved_micro_usd + d.reserved,
       window_requests = c.window_requests + d.requests,
       window_tokens = c.window_tokens + d.tokens
  from deltas d
 where c.counter_key = d.counter_key;

-- name: settleHolds
-- After lockCounters on the grant's budget keys: moves grant $1's holds to spend. Each
-- budget counts the request's charge $2, at most its hold (null: unknown, the whole hold
-- counts), in the bucket of the request's start. A second call finds no hold: idempotent.
with settled as (
  delete from admission_holds h
   where (h.grant_id, h.counter_key) in (
     select grant_id, counter_key from admission_holds where grant_id = $1 order by counter_key for update)
  returning h.counter_key, h.amount_micro_usd, h.started_at, h.bucket_secs
), charged as (
  select counter_key,
         amount_micro_usd as amount,
         least(coalesce($2::bigint, amount_micro_usd), amount_micro_usd) as charge,
         to_timestamp((floor(extract(epoch from started_at) / bucket_secs) + 1) * bucket_secs) as bucket_end
    from settled
), spend as (
  insert into budget_spend (counter_key, bucket_end, spent_micro_usd)
  select counter_key, bucket_end, charge from charged where charge > 0
  on conflict (counter_key, bucket_end) do update set spent_micro_usd = budget_spend.spent_micro_usd + excluded.spent_micro_usd
)
update admission_counters c
   set reserved_micro_usd = c.reserved_micro_usd - ch.amount,
       spent_micro_usd = c.spent_micro_usd + ch.charge
  from charged ch
 where c.counter_key = ch.counter_key;

-- name: releaseGrant
-- After lockCounters on all the grant's keys: grant $1 never reached an upstream. Its
-- holds go back and its rate-limit admissions are withdrawn (those still in the window).
with released as (
  delete from admission_holds h
   where (h.grant_id, h.counter_key) in (
     select grant_id, counter_key from admission_holds where grant_id = $1 order by counter_key for update)
  returning h.counter_key, h.amount_micro_usd
), withdrawn as (
  delete from rate_limit_admissions where grant_id = $1
  returning counter_key, tokens
), deltas as (
  select counter_key, amount_micro_usd as reserved, 0::bigint as requests, 0::bigint as tokens from released
  union all
  select counter_key, 0::bigint, 1::bigint, tokens from withdrawn
)
update admission_counters c
   set reserved_micro_usd = c.reserved_micro_usd - d.reserved,
       window_requests = c.window_requests - d.requests,
       window_tokens = c.window_tokens - d.tokens
  from deltas d
 where c.counter_key = d.counter_key;

-- name: renewHolds
-- Keeps the holds of this instance's requests in flight ($1 grant ids) alive.
update admission_holds h
   set expires_at = statement_timestamp() + make_interval(secs => $2::int)
 where (h.grant_id, h.counter_key) in (
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
