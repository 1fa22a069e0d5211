-- Budgets and rate limits decided in batches (group commit; src/admission/README.md,
-- "One hot key"). An instance queues the admissions of one set of counters that arrive
-- while a call for that set is in flight and sends them in one call: the counter rows are
-- locked once and every request is judged in order, against state that includes every
-- earlier decision of the batch, exactly as one admission_admit per request would judge
-- it. Settlements and releases are batched the same way. Replaces migration 0015's
-- admission_admit and admission_end: one request is a batch of one.

drop function admission_admit(text, text[], int[], bigint[], int[], bigint, text[], int[], bigint[], bigint[], bigint, int);
drop function admission_end(text, text[], bigint, boolean);

-- Judges requests $1 (grant ids, with cost ceilings $2 and output ceilings $3), in order,
-- against the same budgets ($4 … $7) and rate limits ($8 … $11). Locks and the clock as in
-- migration 0015: counters of every key in byte order, clock_timestamp() read after the
-- locks. One row per refused request (its 1-based index and the clause that refused, as
-- admission_admit returned it); a refused request takes nothing, so a later, smaller
-- request of the same batch may still fit. The admitted ones get their holds and
-- admissions, all at the same time, and each counter row is updated once.
create function admission_admit_batch(
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
    with pruned as (
      delete from rate_limit_admissions a
       where a.counter_key = p_rate_keys[i] and a.admitted_at <= v_now - make_interval(secs => p_rate_window_secs[i])
      returning a.tokens
    )
    select count(*), coalesce(sum(pruned.tokens), 0) into v_one, v_two from pruned;
    if v_one > 0 then
      update admission_counters c
         set window_requests = c.window_requests - v_one, window_tokens = c.window_tokens - v_two
       where c.counter_key = p_rate_keys[i];
    end if;
  end loop;

  for i in 1 .. v_budgets loop
    select c.reserved_micro_usd, c.spent_micro_usd into v_one, v_two
      from admission_counters c where c.counter_key = p_budget_keys[i];
    if p_budget_window_secs[i] > 0 then
      select coalesce(sum(s.spent_micro_usd), 0) into v_two
        from budget_spend s
       where s.counter_key = p_budget_keys[i] and s.bucket_end > v_now - make_interval(secs => p_budget_window_secs[i]);
    end if;
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

-- Settles ($2 the charges, null: unknown) or releases ($4 true, $2 ignored) grants $1,
-- all of counter keys $3, in one call: the counters are locked in byte order first, the
-- grants' holds (in (grant_id, counter_key) order, as renewals lock them) move to spend
-- or back, a release withdraws the grants' rate-limit admissions, and each counter row and
-- spend bucket is written once. Idempotent per grant, as admission_end was.
create function admission_end_batch(p_grant_ids text[], p_charges bigint[], p_keys text[], p_release boolean)
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
