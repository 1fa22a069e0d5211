-- Public, platform-wide figures (src/public/*). Read-only aggregates over requests.

-- name: platformUsageByDayAndModel
-- GET /v1/stats/usage: succeeded requests created in [$1, $2), one row per UTC day and
-- model: the whole days [$3, $4) from the usage rollups (migration 0034), the partial day
-- at each edge (today, up to now) from the records, whose BRIN index requests_created_brin
-- serves the range. completion_tokens already includes reasoning_tokens; total = prompt +
-- completion.
select to_char(day, 'YYYY-MM-DD') as day,
       model_id,
       sum(request_count)::int8 as request_count,
       sum(prompt_tokens)::int8 as prompt_tokens,
       sum(completion_tokens)::int8 as completion_tokens,
       sum(reasoning_tokens)::int8 as reasoning_tokens
  from (select day, coalesce(model_id, '') as model_id, succeeded_count as request_count,
               succeeded_prompt_tokens as prompt_tokens, succeeded_completion_tokens as completion_tokens,
               succeeded_reasoning_tokens as reasoning_tokens
          from request_usage_days
         where day >= ($3::timestamptz at time zone 'UTC')::date and day < ($4::timestamptz at time zone 'UTC')::date
           and succeeded_count > 0
        union all
        select (created_at at time zone 'UTC')::date, coalesce(model_id, ''), 1, prompt_tokens, completion_tokens, reasoning_tokens
          from requests
         where status = 'succeeded' and created_at >= $1::timestamptz and created_at < $3::timestamptz
        union all
        select (created_at at time zone 'UTC')::date, coalesce(model_id, ''), 1, prompt_tokens, completion_tokens, reasoning_tokens
          from requests
         where status = 'succeeded' and created_at >= $4::timestamptz and created_at < $2::timestamptz) d
 group by 1, 2
 order by 1, 2;

-- name: providerRequestWindow
-- GET /v1/providers: per final provider, requests created since $2 (the last minute,
-- every status: current_rpm) and the cache-read share of prompt tokens of succeeded
-- requests created since $1 (the metrics window). Prompt tokens include cache reads. The
-- whole minutes [$3, $4) before the last minute come from provider_request_minutes
-- (migration 0034); the records are read for what is left: from $1 to the first whole
-- minute, and from $4 (the start of $2's minute) on, at most two minutes.
select provider_id,
       sum(last_minute_count)::int8 as last_minute_count,
       sum(cache_read_tokens)::int8 as cache_read_tokens,
       sum(prompt_tokens)::int8 as prompt_tokens
  from (select provider_id, 0 as last_minute_count,
               succeeded_cache_read_tokens as cache_read_tokens, succeeded_prompt_tokens as prompt_tokens
          from provider_request_minutes
         where minute >= $3::timestamptz and minute < $4::timestamptz
        union all
        select provider_id, (created_at >= $2::timestamptz)::int,
               case when status = 'succeeded' then cache_read_tokens else 0 end,
               case when status = 'succeeded' then prompt_tokens else 0 end
          from requests
         where created_at >= $1::timestamptz and created_at < $3::timestamptz and provider_id is not null
        union all
        select provider_id, (created_at >= $2::timestamptz)::int,
               case when status = 'succeeded' then cache_read_tokens else 0 end,
               case when status = 'succeeded' then prompt_tokens else 0 end
          from requests
         where created_at >= $4::timestamptz and provider_id is not null) w
 group by provider_id;
