-- Budget and rate-limit counters held exactly across instances (src/admission/README.md).
--
-- Every admission, settlement, release and sweep of a counter key first locks its
-- admission_counters row (keys in byte order, one transaction), then reads and writes
-- the rows below for that key. The row is the serialisation point: no check-then-
-- increment race between instances, no per-process counter.

create table admission_counters (
  counter_key        text collate "C" primary key,
  -- Budgets: the sum of the live holds of this key (requests in flight).
  reserved_micro_usd bigint not null default 0,
  -- Budgets: every charge ever settled against this key (the `total` window).
  spent_micro_usd    bigint not null default 0,
  -- Rate limits: the admissions of this key not yet pruned, and their tokens.
  window_requests    bigint not null default 0,
  window_tokens      bigint not null default 0
);

-- A budget reservation of one request in flight. Renewed by its instance while the
-- request runs; an expired hold (its instance died) is swept as spent at its amount.
create table admission_holds (
  grant_id         text collate "C" not null,
  counter_key      text collate "C" not null,
  amount_micro_usd bigint not null,
  started_at       timestamptz not null,
  -- The width of the spend bucket the settled charge lands in (by the budget's window).
  bucket_secs      integer not null,
  expires_at       timestamptz not null,
  primary key (grant_id, counter_key)
);
create index admission_holds_expires on admission_holds (expires_at);

-- Settled budget spend per key in time buckets: a window's spend is the sum of the
-- buckets that end inside it. bucket_end is stored, so buckets of any width add up.
create table budget_spend (
  counter_key     text collate "C" not null,
  bucket_end      timestamptz not null,
  spent_micro_usd bigint not null,
  primary key (counter_key, bucket_end)
);

-- One row per request a rate limit admitted, pruned once it leaves the key's window.
create table rate_limit_admissions (
  counter_key text collate "C" not null,
  admitted_at timestamptz not null,
  grant_id    text collate "C" not null,
  tokens      bigint not null,
  primary key (counter_key, admitted_at, grant_id)
);
create index rate_limit_admissions_grant on rate_limit_admissions (grant_id);

-- Admission in one round trip. A transaction driven from the gateway would hold the
-- counter locks across several network round trips (and the gateway's event loop), and
-- every request of a busy counter key waits for that. Here the locks are held only while
-- the database works. Each statement of a VOLATILE function takes a fresh snapshot, so
-- the reads after the locks see every settlement and admission committed before them.
--
-- Locks the counters of every key (budget keys $2, rate keys $7) in byte order, prunes
-- the admissions that left their rate limits' windows, then judges each clause at
-- clock_timestamp() (read after the locks: later than any admission committed before).
-- Admitted: holds $6 on every budget (bucket widths $5) and records an admission of $11
-- tokens on every rate limit, and returns no row. Refused: writes nothing more and
-- returns one row naming the clause: a budget (1-based index, spent, reserved), or the
-- rate limit that frees up last (index, whole seconds until it has room, at least 1).
create function admission_admit(
  p_grant_id text,
  p_budget_keys text[], p_budget_window_secs int[], p_budget_limits bigint[], p_bucket_secs int[], p_amount bigint,
  p_rate_keys text[], p_rate_window_secs int[], p_rate_max_requests bigint[], p_rate_max_tokens bigint[], p_tokens bigint,
  p_hold_ttl_secs int
) returns table (refused_clause text, clause_index int, spent_micro_usd bigint, reserved_micro_usd bigint, retry_after_secs int)
language plpgsql volatile as $$
declare
  v_now timestamptz;
  v_spent bigint;
  v_reserved bigint;
  v_requests bigint;
  v_window_tokens bigint;
  v_excess_requests bigint;
  v_excess_tokens bigint;
  v_wait int;
  v_worst int;
  v_worst_wait int;
begin
  insert into admission_counters (counter_key)
  select key from unnest(p_budget_keys || p_rate_keys) as key order by key collate "C"
  on conflict (counter_key) do update set counter_key = excluded.counter_key;
  v_now := clock_timestamp();

  with pruned as (
    delete from rate_limit_admissions a
     using unnest(p_rate_keys, p_rate_window_secs) as r(key, secs)
     where a.counter_key = r.key and a.admitted_at <= v_now - make_interval(secs => r.secs)
    returning a.counter_key, a.tokens
  ), totals as (
    select counter_key, count(*)::bigint as requests, sum(tokens)::bigint as tokens from pruned group by counter_key
  )
  update admission_counters c
     set window_requests = c.window_requests - t.requests, window_tokens = c.window_tokens - t.tokens
    from totals t
   where c.counter_key = t.counter_key;

  for i in 1 .. coalesce(array_length(p_budget_keys, 1), 0) loop
    select c.reserved_micro_usd, c.spent_micro_usd into v_reserved, v_spent
      from admission_counters c where c.counter_key = p_budget_keys[i];
    if p_budget_window_secs[i] > 0 then
      select coalesce(sum(s.spent_micro_usd), 0) into v_spent
        from budget_spend s
       where s.counter_key = p_budget_keys[i] and s.bucket_end > v_now - make_interval(secs => p_budget_window_secs[i]);
    end if;
    if v_spent + v_reserved + p_amount > p_budget_limits[i] then
      return query select 'budget'::text, i, v_spent, v_reserved, null::int;
      return;
    end if;
  end loop;

  for i in 1 .. coalesce(array_length(p_rate_keys, 1), 0) loop
    select c.window_requests, c.window_tokens into v_requests, v_window_tokens
      from admission_counters c where c.counter_key = p_rate_keys[i];
    v_excess_requests := coalesce(v_requests + 1 - p_rate_max_requests[i], 0);
    v_excess_tokens := coalesce(v_window_tokens + p_tokens - p_rate_max_tokens[i], 0);
    continue when v_excess_requests <= 0 and v_excess_tokens <= 0;
    v_wait := null;
    if p_rate_max_tokens[i] is null or p_tokens <= p_rate_max_tokens[i] then
      -- The oldest admissions whose leaving frees enough requests and tokens.
      select ceil(extract(epoch from (o.admitted_at + make_interval(secs => p_rate_window_secs[i]) - v_now)))::int into v_wait
        from (
          select a.admitted_at,
                 row_number() over w as requests,
                 sum(a.tokens) over w as tokens
            from rate_limit_admissions a
           where a.counter_key = p_rate_keys[i]
          window w as (order by a.admitted_at, a.grant_id rows between unbounded preceding and current row)
        ) o
       where o.requests >= greatest(v_excess_requests, 0) and o.tokens >= greatest(v_excess_tokens, 0)
       order by o.admitted_at
       limit 1;
    end if;
    -- No wait frees enough (the request alone exceeds max_tokens): a whole window.
    v_wait := greatest(coalesce(v_wait, p_rate_window_secs[i]), 1);
    if v_worst is null or v_wait > v_worst_wait then
      v_worst := i;
      v_worst_wait := v_wait;
    end if;
  end loop;
  if v_worst is not null then
    return query select 'rate_limit'::text, v_worst, null::bigint, null::bigint, v_worst_wait;
    return;
  end if;

  insert into admission_holds (grant_id, counter_key, amount_micro_usd, started_at, bucket_secs, expires_at)
  select p_grant_id, b.key, p_amount, v_now, b.secs, v_now + make_interval(secs => p_hold_ttl_secs)
    from unnest(p_budget_keys, p_bucket_secs) as b(key, secs);
  insert into rate_limit_admissions (counter_key, admitted_at, grant_id, tokens)
  select key, v_now, p_grant_id, p_tokens from unnest(p_rate_keys) as key;
  update admission_counters c
     set reserved_micro_usd = c.reserved_micro_usd + case when c.counter_key = any(p_budget_keys) then p_amount else 0 end,
         window_requests = c.window_requests + case when c.counter_key = any(p_rate_keys) then 1 else 0 end,
         window_tokens = c.window_tokens + case when c.counter_key = any(p_rate_keys) then p_tokens else 0 end
   where c.counter_key = any(p_budget_keys) or c.counter_key = any(p_rate_keys);
end;
$$;

-- Settles ($3 the charge, null: unknown) or releases ($3 ignored, p_release true) a
-- grant in one round trip: its counters ($2) are locked in byte order first, then its
-- holds move to spend or back, and a release withdraws its rate-limit admissions.
-- Idempotent: a second call finds nothing of the grant left.
create function admission_end(p_grant_id text, p_keys text[], p_charge bigint, p_release boolean)
returns void language plpgsql volatile as $$
begin
  perform 1 from admission_counters where counter_key = any(p_keys) order by counter_key collate "C" for update;
  if p_release then
    with released as (
      delete from admission_holds h
       where (h.grant_id, h.counter_key) in (
         select grant_id, counter_key from admission_holds where grant_id = p_grant_id order by counter_key for update)
      returning h.counter_key, h.amount_micro_usd
    ), withdrawn as (
      delete from rate_limit_admissions where grant_id = p_grant_id
      returning counter_key, tokens
    ), deltas as (
      select counter_key, amount_micro_usd as reserved, 0::bigint as requests, 0::bigint as tokens from released
      union all
      select counter_key, 0::bigint, 1::bigint, tokens from withdrawn
    ), totals as (
      select counter_key, sum(reserved)::bigint as reserved, sum(requests)::bigint as requests, sum(tokens)::bigint as tokens
        from deltas group by counter_key
    )
    update admission_counters c
       set reserved_micro_usd = c.reserved_micro_usd - t.reserved,
           window_requests = c.window_requests - t.requests,
           window_tokens = c.window_tokens - t.tokens
      from totals t
     where c.counter_key = t.counter_key;
  else
    with settled as (
      delete from admission_holds h
       where (h.grant_id, h.counter_key) in (
         select grant_id, counter_key from admission_holds where grant_id = p_grant_id order by counter_key for update)
      returning h.counter_key, h.amount_micro_usd, h.started_at, h.bucket_secs
    ), charged as (
      select counter_key,
             amount_micro_usd as amount,
             least(coalesce(p_charge, amount_micro_usd), amount_micro_usd) as charge,
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
  end if;
end;
$$;
