-- Leases of room on hot budget and rate-limit keys (src/admission/README.md, "Leases").
-- While a set of clauses is far from its limits, an instance takes a chunk of each at once
-- and admits the requests that fit in it without a database call, as the wallet does: a
-- budget's chunk is one hold of the whole amount, renewed and swept like any hold; a rate
-- limit's chunk is one admission row counting several requests, stamped at the end of the
-- lease's life, so each request admitted from it stays counted at least a whole window
-- after its own admission (the window can only refuse early, never admit more). A lease
-- is granted only while every clause keeps at least `p_headroom_factor` times the chunk
-- free; nearer the limits every request goes through admission_admit_batch as before.

alter table rate_limit_admissions add column requests int not null default 1;

-- Prunes the admissions that left key $1's window of $2 seconds at $3 and takes them off
-- its counter. After the counter's lock.
create function admission_prune_window(p_key text, p_window_secs int, p_now timestamptz)
returns void language plpgsql volatile
set enable_seqscan = off
as $$
declare
  v_requests bigint;
  v_tokens bigint;
begin
  with pruned as (
    delete from rate_limit_admissions a
     where a.counter_key = p_key and a.admitted_at <= p_now - make_interval(secs => p_window_secs)
    returning a.tokens, a.requests
  )
  select coalesce(sum(pruned.requests), 0), coalesce(sum(pruned.tokens), 0) into v_requests, v_tokens from pruned;
  if v_requests > 0 then
    update admission_counters c
       set window_requests = c.window_requests - v_requests, window_tokens = c.window_tokens - v_tokens
     where c.counter_key = p_key;
  end if;
end;
$$;

-- Budget key $1's reservations in flight and its spend: the lifetime sum for a window of
-- 0 (`total`), else the buckets ending inside the window of $2 seconds before $3.
create function admission_budget_state(p_key text, p_window_secs int, p_now timestamptz)
returns table (reserved bigint, spent bigint) language plpgsql stable
set enable_seqscan = off
as $$
begin
  select c.reserved_micro_usd, c.spent_micro_usd into reserved, spent
    from admission_counters c where c.counter_key = p_key;
  if p_window_secs > 0 then
    select coalesce(sum(s.spent_micro_usd), 0) into spent
      from budget_spend s
     where s.counter_key = p_key and s.bucket_end > p_now - make_interval(secs => p_window_secs);
  end if;
  return next;
end;
$$;

-- Batches as in migration 0024, with the window arithmetic counting each admission row's
-- requests (1 for a request's own row, the chunk for a lease's).
create or replace function admission_admit_batch(
  p_grant_ids text[], p_amounts bigint[], p_tokens bigint[],
  p_budget_keys text[], p_budget_window_secs int[], p_budget_limits bigint[], p_bucket_secs int[],
  p_rate_keys text[], p_rate_window_secs int[], p_rate_max_requests bigint[], p_rate_max_tokens bigint[],
  p_hold_ttl_secs int
) returns table (request_index int, refused_clause text, clause_index int, spent_micro_usd bigint, reserved_micro_usd bigint, retry_after_secs int)
language plpgsql volatile
set enable_seqscan = off
as $$
declare
  v_budgets int := coalesce(array_length(p_budget_keys, 1), 0);
  v_rates int := coalesce(array_length(p_rate_keys, 1), 0);
  v_now timestamptz;
  -- Per clause: the state read after the locks plus this batch's admissions so far.
  v_spent bigint[];
  v_reserved bigint[];
  v_requests bigint[];
  v_window_tokens bigint[];
  v_one bigint;
  v_two bigint;
  v_refused boolean;
  v_excess_requests bigint;
  v_excess_tokens bigint;
  v_wait int;
  v_worst int;
  v_worst_wait int;
  v_admitted int[] := '{}';
  v_admitted_amount bigint := 0;
  v_admitted_tokens bigint := 0;
begin
  insert into admission_counters (counter_key)
  select key from unnest(p_budget_keys || p_rate_keys) as key order by key collate "C"
  on conflict (counter_key) do update set counter_key = excluded.counter_key;
  v_now := clock_timestamp();

  -- One statement per rate limit, each an index range: joined to the array of keys, a
  -- plan made while the table was small hash-joins a scan of every admission in the window.
  for i in 1 .. v_rates loop
    perform admission_prune_window(p_rate_keys[i], p_rate_window_secs[i], v_now);
  end loop;

  for i in 1 .. v_budgets loop
    select b.reserved, b.spent into v_one, v_two from admission_budget_state(p_budget_keys[i], p_budget_window_secs[i], v_now) b;
    v_reserved[i] := v_one;
    v_spent[i] := v_two;
  end loop;
  for i in 1 .. v_rates loop
    select c.window_requests, c.window_tokens into v_one, v_two
      from admission_counters c where c.counter_key = p_rate_keys[i];
    v_requests[i] := v_one;
    v_window_tokens[i] := v_two;
  end loop;

  for r in 1 .. coalesce(array_length(p_grant_ids, 1), 0) loop
    v_refused := false;
    for i in 1 .. v_budgets loop
      if v_spent[i] + v_reserved[i] + p_amounts[r] > p_budget_limits[i] then
        request_index := r; refused_clause := 'budget'; clause_index := i;
        spent_micro_usd := v_spent[i]; reserved_micro_usd := v_reserved[i]; retry_after_secs := null;
        return next;
        v_refused := true;
        exit;
      end if;
    end loop;
    continue when v_refused;

    v_worst := null;
    for i in 1 .. v_rates loop
      v_excess_requests := coalesce(v_requests[i] + 1 - p_rate_max_requests[i], 0);
      v_excess_tokens := coalesce(v_window_tokens[i] + p_tokens[r] - p_rate_max_tokens[i], 0);
      continue when v_excess_requests <= 0 and v_excess_tokens <= 0;
      v_wait := null;
      if p_rate_max_tokens[i] is null or p_tokens[r] <= p_rate_max_tokens[i] then
        -- The oldest stored admissions whose leaving frees enough. This batch's admissions
        -- are newer than all of them (they are made at v_now): when the stored ones cannot
        -- free enough, the wait is a whole window, which the default below gives.
        select ceil(extract(epoch from (o.admitted_at + make_interval(secs => p_rate_window_secs[i]) - v_now)))::int into v_wait
          from (
            select a.admitted_at,
                   sum(a.requests) over w as requests,
                   sum(a.tokens) over w as tokens
              from rate_limit_admissions a
             where a.counter_key = p_rate_keys[i]
            window w as (order by a.admitted_at, a.grant_id rows between unbounded preceding and current row)
          ) o
         where o.requests >= greatest(v_excess_requests, 0) and o.tokens >= greatest(v_excess_tokens, 0)
         order by o.admitted_at
         limit 1;
      end if;
      v_wait := greatest(coalesce(v_wait, p_rate_window_secs[i]), 1);
      if v_worst is null or v_wait > v_worst_wait then
        v_worst := i;
        v_worst_wait := v_wait;
      end if;
    end loop;
    if v_worst is not null then
      request_index := r; refused_clause := 'rate_limit'; clause_index := v_worst;
      spent_micro_usd := null; reserved_micro_usd := null; retry_after_secs := v_worst_wait;
      return next;
      continue;
    end if;

    v_admitted := v_admitted || r;
    v_admitted_amount := v_admitted_amount + p_amounts[r];
    v_admitted_tokens := v_admitted_tokens + p_tokens[r];
    for i in 1 .. v_budgets loop
      v_reserved[i] := v_reserved[i] + p_amounts[r];
    end loop;
    for i in 1 .. v_rates loop
      v_requests[i] := v_requests[i] + 1;
      v_window_tokens[i] := v_window_tokens[i] + p_tokens[r];
    end loop;
  end loop;

  if cardinality(v_admitted) = 0 then
    return;
  end if;
  insert into admission_holds (grant_id, counter_key, amount_micro_usd, started_at, bucket_secs, expires_at)
  select p_grant_ids[a.r], b.key, p_amounts[a.r], v_now, b.secs, v_now + make_interval(secs => p_hold_ttl_secs)
    from unnest(v_admitted) as a(r), unnest(p_budget_keys, p_bucket_secs) as b(key, secs);
  insert into rate_limit_admissions (counter_key, admitted_at, grant_id, tokens)
  select k.key, v_now, p_grant_ids[a.r], p_tokens[a.r]
    from unnest(v_admitted) as a(r), unnest(p_rate_keys) as k(key);
  update admission_counters c
     set reserved_micro_usd = c.reserved_micro_usd + case when c.counter_key = any(p_budget_keys) then v_admitted_amount else 0 end,
         window_requests = c.window_requests + case when c.counter_key = any(p_rate_keys) then cardinality(v_admitted) else 0 end,
         window_tokens = c.window_tokens + case when c.counter_key = any(p_rate_keys) then v_admitted_tokens else 0 end
   where c.counter_key = any(p_budget_keys) or c.counter_key = any(p_rate_keys);
end;
$$;

create or replace function admission_end_batch(p_grant_ids text[], p_charges bigint[], p_keys text[], p_release boolean)
returns void language plpgsql volatile
set enable_seqscan = off
as $$
begin
  perform 1 from admission_counters where counter_key = any(p_keys) order by counter_key collate "C" for update;
  if p_release then
    with released as (
      delete from admission_holds h
       where h.grant_id = any(p_grant_ids) and (h.grant_id, h.counter_key) in (
         select grant_id, counter_key from admission_holds where grant_id = any(p_grant_ids) order by grant_id, counter_key for update)
      returning h.counter_key, h.amount_micro_usd
    ), withdrawn as (
      delete from rate_limit_admissions where grant_id = any(p_grant_ids)
      returning counter_key, tokens, requests
    ), deltas as (
      select counter_key, amount_micro_usd as reserved, 0::bigint as requests, 0::bigint as tokens from released
      union all
      select counter_key, 0::bigint, requests::bigint, tokens from withdrawn
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
       where h.grant_id = any(p_grant_ids) and (h.grant_id, h.counter_key) in (
         select grant_id, counter_key from admission_holds where grant_id = any(p_grant_ids) order by grant_id, counter_key for update)
      returning h.grant_id, h.counter_key, h.amount_micro_usd, h.started_at, h.bucket_secs
    ), charges as (
      -- One charge per grant, even if a grant were listed twice.
      select distinct on (g.grant_id) g.grant_id, g.charge from unnest(p_grant_ids, p_charges) as g(grant_id, charge) order by g.grant_id
    ), charged as (
      select s.counter_key,
             s.amount_micro_usd as amount,
             least(coalesce(g.charge, s.amount_micro_usd), s.amount_micro_usd) as charge,
             to_timestamp((floor(extract(epoch from s.started_at) / s.bucket_secs) + 1) * s.bucket_secs) as bucket_end
        from settled s join charges g on g.grant_id = s.grant_id
    ), spend as (
      insert into budget_spend (counter_key, bucket_end, spent_micro_usd)
      select counter_key, bucket_end, sum(charge)::bigint from charged where charge > 0 group by counter_key, bucket_end
      on conflict (counter_key, bucket_end) do update set spent_micro_usd = budget_spend.spent_micro_usd + excluded.spent_micro_usd
    ), totals as (
      select counter_key, sum(amount)::bigint as amount, sum(charge)::bigint as charge from charged group by counter_key
    )
    update admission_counters c
       set reserved_micro_usd = c.reserved_micro_usd - t.amount,
           spent_micro_usd = c.spent_micro_usd + t.charge
      from totals t
     where c.counter_key = t.counter_key;
  end if;
end;
$$;

-- Takes lease $1: $2 micro-USD on every budget, $3 requests and $4 tokens on every rate
-- limit, when each clause keeps at least $15 times that free after it; else takes nothing
-- and returns false. Locks, prunes and reads as admission_admit_batch does. The rate
-- limits' row is stamped $14 seconds ahead: the lease admits requests for at most that
-- long, so each stays counted at least a window after its admission.
create function admission_lease_take(
  p_lease_id text, p_amount bigint, p_requests int, p_tokens bigint,
  p_budget_keys text[], p_budget_window_secs int[], p_budget_limits bigint[], p_bucket_secs int[],
  p_rate_keys text[], p_rate_window_secs int[], p_rate_max_requests bigint[], p_rate_max_tokens bigint[],
  p_hold_ttl_secs int, p_life_secs int, p_headroom_factor int
) returns boolean
language plpgsql volatile
set enable_seqscan = off
as $$
declare
  v_budgets int := coalesce(array_length(p_budget_keys, 1), 0);
  v_rates int := coalesce(array_length(p_rate_keys, 1), 0);
  v_now timestamptz;
  v_reserved bigint;
  v_spent bigint;
  v_requests bigint;
  v_tokens bigint;
begin
  insert into admission_counters (counter_key)
  select key from unnest(p_budget_keys || p_rate_keys) as key order by key collate "C"
  on conflict (counter_key) do update set counter_key = excluded.counter_key;
  v_now := clock_timestamp();

  for i in 1 .. v_rates loop
    perform admission_prune_window(p_rate_keys[i], p_rate_window_secs[i], v_now);
    select c.window_requests, c.window_tokens into v_requests, v_tokens from admission_counters c where c.counter_key = p_rate_keys[i];
    if p_rate_max_requests[i] is not null and p_rate_max_requests[i] - v_requests < p_requests::bigint * (p_headroom_factor + 1) then
      return false;
    end if;
    if p_rate_max_tokens[i] is not null and p_rate_max_tokens[i] - v_tokens < p_tokens * (p_headroom_factor + 1) then
      return false;
    end if;
  end loop;
  for i in 1 .. v_budgets loop
    select b.reserved, b.spent into v_reserved, v_spent from admission_budget_state(p_budget_keys[i], p_budget_window_secs[i], v_now) b;
    if p_budget_limits[i] - v_spent - v_reserved < p_amount * (p_headroom_factor + 1) then
      return false;
    end if;
  end loop;

  insert into admission_holds (grant_id, counter_key, amount_micro_usd, started_at, bucket_secs, expires_at)
  select p_lease_id, b.key, p_amount, v_now, b.secs, v_now + make_interval(secs => p_hold_ttl_secs)
    from unnest(p_budget_keys, p_bucket_secs) as b(key, secs);
  insert into rate_limit_admissions (counter_key, admitted_at, grant_id, tokens, requests)
  select k.key, v_now + make_interval(secs => p_life_secs), p_lease_id, p_tokens, p_requests
    from unnest(p_rate_keys) as k(key);
  update admission_counters c
     set reserved_micro_usd = c.reserved_micro_usd + case when c.counter_key = any(p_budget_keys) then p_amount else 0 end,
         window_requests = c.window_requests + case when c.counter_key = any(p_rate_keys) then p_requests else 0 end,
         window_tokens = c.window_tokens + case when c.counter_key = any(p_rate_keys) then p_tokens else 0 end
   where c.counter_key = any(p_budget_keys) or c.counter_key = any(p_rate_keys);
  return true;
end;
$$;

-- Ends lease $1 on counter keys $2: its budget holds move to spend at the charges of the
-- requests it admitted ($4, each in the bucket of its start second $3 since the epoch;
-- at most the hold), and its rate-limit rows keep only the $5 requests and $6 tokens it
-- used, at the same time. Idempotent: a lease already ended, or whose hold was swept as
-- spent (its instance stalled past the hold's life), changes nothing more.
create function admission_lease_end(
  p_lease_id text, p_keys text[], p_charge_starts bigint[], p_charges bigint[], p_used_requests int, p_used_tokens bigint
) returns void
language plpgsql volatile
set enable_seqscan = off
as $$
begin
  perform 1 from admission_counters where counter_key = any(p_keys) order by counter_key collate "C" for update;
  with ended as (
    delete from admission_holds h
     where h.grant_id = p_lease_id and (h.grant_id, h.counter_key) in (
       select grant_id, counter_key from admission_holds where grant_id = p_lease_id order by grant_id, counter_key for update)
    returning h.counter_key, h.amount_micro_usd, h.bucket_secs
  ), charges as (
    select g.started, g.charge from unnest(p_charge_starts, p_charges) as g(started, charge) where g.charge > 0
  ), total as (
    select coalesce(sum(charge), 0)::bigint as charge from charges
  ), buckets as (
    select e.counter_key, to_timestamp((floor(g.started::double precision / e.bucket_secs) + 1) * e.bucket_secs) as bucket_end, sum(g.charge)::bigint as charge
      from ended e cross join charges g
     group by e.counter_key, 2
  ), spend as (
    insert into budget_spend (counter_key, bucket_end, spent_micro_usd)
    select counter_key, bucket_end, charge from buckets
    on conflict (counter_key, bucket_end) do update set spent_micro_usd = budget_spend.spent_micro_usd + excluded.spent_micro_usd
  )
  update admission_counters c
     set reserved_micro_usd = c.reserved_micro_usd - e.amount_micro_usd,
         spent_micro_usd = c.spent_micro_usd + least(t.charge, e.amount_micro_usd)
    from ended e, total t
   where c.counter_key = e.counter_key;

  with withdrawn as (
    delete from rate_limit_admissions a where a.grant_id = p_lease_id
    returning a.counter_key, a.admitted_at, a.tokens, a.requests
  ), kept as (
    insert into rate_limit_admissions (counter_key, admitted_at, grant_id, tokens, requests)
    select w.counter_key, w.admitted_at, p_lease_id || '.used', least(p_used_tokens, w.tokens), least(p_used_requests, w.requests)
      from withdrawn w where p_used_requests > 0
  )
  update admission_counters c
     set window_requests = c.window_requests - (w.requests - least(p_used_requests, w.requests)),
         window_tokens = c.window_tokens - (w.tokens - least(p_used_tokens, w.tokens))
    from withdrawn w
   where c.counter_key = w.counter_key;
end;
$$;
