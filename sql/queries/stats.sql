-- Public, platform-wide figures (src/public/*). Read-only aggregates over requests.

-- name: platformUsageByDayAndModel
-- GET /v1/stats/usage: succeeded requests created in [$1, $2), one row per UTC day and
-- model, in a single scan (the BRIN index requests_created_brin serves the range).
-- completion_tokens already includes reasoning_tokens; total = prompt + completion.
select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
       coalesce(model_id, '') as model_id,
       count(*) as request_count,
       coalesce(sum(prompt_tokens), 0)::int8 as prompt_tokens,
       coalesce(sum(completion_tokens), 0)::int8 as completion_tokens,
       coalesce(sum(reasoning_tokens), 0)::int8 as reasoning_tokens
  from requests
 where status = 'succeeded'
   and created_at >= $1
   and created_at < $2
 group by 1, 2
 order by 1, 2;

-- name: providerRequestWindow
-- GET /v1/providers: per final provider, requests created since $2 (the last minute,
-- every status: current_rpm) and the cache-read share of prompt tokens of succeeded
-- requests created since $1 (the metrics window). Prompt tokens include cache reads.
select provider_id,
       count(*) filter (where created_at >= $2) as last_minute_count,
       coalesce(sum(cache_read_tokens) filter (where status = 'succeeded'), 0)::int8 as cache_read_tokens,
       coalesce(sum(prompt_tokens) filter (where status = 'succeeded'), 0)::int8 as prompt_tokens
  from requests
 where created_at >= $1
   and provider_id is not null
 group by provider_id;
