-- What is left of each rate limit after a batch of admissions, for the x-ratelimit-*
-- response headers (README "Rate-limit headers"), in the same round trip as the batch.
-- A new function beside admission_admit_batch, which is unchanged: a version still
-- running calls that one and reads its rows as before.
--
-- Its rows: those of admission_admit_batch (the refusals), then one row per rate limit
-- with refused_clause 'window': the requests and tokens its window counts after the batch
-- (read under the counters' locks the batch took) and the whole seconds until the oldest
-- admission it counts leaves it (null when it counts none). One counter read and one
-- index probe of the primary key per rate limit per batch, not per request.
create function admission_admit_batch_report(
  p_grant_ids text[], p_amounts bigint[], p_tokens bigint[],
  p_budget_keys text[], p_budget_window_secs int[], p_budget_limits bigint[], p_bucket_secs int[],
  p_rate_keys text[], p_rate_window_secs int[], p_rate_max_requests bigint[], p_rate_max_tokens bigint[],
  p_hold_ttl_secs int
) returns table (request_index int, refused_clause text, clause_index int, spent_micro_usd bigint, reserved_micro_usd bigint,
                 retry_after_secs int, window_requests bigint, window_tokens bigint, reset_secs int)
language plpgsql volatile
set enable_seqscan = off
as $$
declare
  v_now timestamptz;
begin
  return query
    select b.request_index, b.refused_clause, b.clause_index, b.spent_micro_usd, b.reserved_micro_usd, b.retry_after_secs,
           null::bigint, null::bigint, null::int
      from admission_admit_batch(p_grant_ids, p_amounts, p_tokens,
                                 p_budget_keys, p_budget_window_secs, p_budget_limits, p_bucket_secs,
                                 p_rate_keys, p_rate_window_secs, p_rate_max_requests, p_rate_max_tokens,
                                 p_hold_ttl_secs) b;
  v_now := clock_timestamp();
  for i in 1 .. coalesce(array_length(p_rate_keys, 1), 0) loop
    return query
      select null::int, 'window'::text, i, null::bigint, null::bigint, null::int,
             c.window_requests, c.window_tokens,
             (select greatest(0, ceil(extract(epoch from (a.admitted_at + make_interval(secs => p_rate_window_secs[i]) - v_now))))::int
                from rate_limit_admissions a
               where a.counter_key = p_rate_keys[i]
               order by a.admitted_at
               limit 1)
        from admission_counters c
       where c.counter_key = p_rate_keys[i];
  end loop;
end;
$$;
