-- Request history, usage aggregates and settlement receipts. Every statement names
-- the tenant (account_id) in its WHERE, whatever else narrows it.

-- name: listNamespaceRequests
-- Newest first; (created_at, id) descending is served by requests_namespace_created.
-- $1 account, $2 namespace, $3 limit, $4 offset; the history filters, each null when
-- absent: $5 status, $6 model_id, $7 streamed, $8 from (inclusive), $9 to (exclusive);
-- $10/$11 (null: from the newest) the position of the last record of the previous page,
-- its exact created_at (keyset_created_at; text both ways, since a Date would drop the
-- microseconds) and id, for reading a long listing page after page without an offset.
select id, request_id, api_key_id, oauth_token_id, billing_status, created_at, completed_at, prompt_tokens, completion_tokens,
       final_charge_micro_usd, finish_reason, first_token_kind, funding_source,
       generation_duration_ms, request_duration_ms, upstream_duration_ms, ttft_ms,
       model_id, provider_id, routing_profile, status, status_code, streamed,
       used_capabilities, usage_evidence::json as usage_evidence, created_at::text as keyset_created_at,
       -- The policy that refused the request, kept as a warning of the record (README "Policies").
       (select w from json_array_elements(warnings::json) w where w->>'code' = 'refused_by_policy' limit 1) as refusal,
       -- The routing preset the request named (`@<name>`), kept the same way.
       (select w->>'field' from json_array_elements(warnings::json) w where w->>'code' = 'routing_preset' limit 1) as routing_preset
  from requests
 where account_id = $1 and namespace_id = $2
   -- 'refused' is no stored status: a failed request that never reached a provider (no
   -- attempt: a policy, the wallet or the request itself refused it), charged nothing.
   and ($5::text is null or status = $5::text or ($5::text = 'refused' and status = 'failed' and attempts = '[]'))
   and ($6::text is null or model_id = $6::text)
   and ($7::boolean is null or streamed = $7::boolean)
   and ($8::timestamptz is null or created_at >= $8::timestamptz)
   and ($9::timestamptz is null or created_at < $9::timestamptz)
   and ($10::text is null or (created_at, id) < ($10::text::timestamptz, $11::text))
   -- Implied by the row comparison, but PostgreSQL prunes partitions only on a plain
   -- comparison of the partition key: this one leaves out the months after the position.
   and ($10::text is null or created_at <= $10::text::timestamptz)
 order by created_at desc, id desc
 limit $3 offset $4;

-- name: listKeyRequests
-- The same listing for one API key ($12), a separate statement so that its plan is
-- always the (namespace, api_key_id, created_at) range of requests_namespace_api_key_created,
-- never a walk of the whole namespace. Same parameters as listNamespaceRequests otherwise.
select id, request_id, api_key_id, oauth_token_id, billing_status, created_at, completed_at, prompt_tokens, completion_tokens,
       final_charge_micro_usd, finish_reason, first_token_kind, funding_source,
       generation_duration_ms, request_duration_ms, upstream_duration_ms, ttft_ms,
       model_id, provider_id, routing_profile, status, status_code, streamed,
       used_capabilities, usage_evidence::json as usage_evidence, created_at::text as keyset_created_at,
       -- The policy that refused the request, kept as a warning of the record (README "Policies").
       (select w from json_array_elements(warnings::json) w where w->>'code' = 'refused_by_policy' limit 1) as refusal,
       -- The routing preset the request named (`@<name>`), kept the same way.
       (select w->>'field' from json_array_elements(warnings::json) w where w->>'code' = 'routing_preset' limit 1) as routing_preset
  from requests
 where account_id = $1 and namespace_id = $2 and api_key_id = $12
   -- 'refused' is no stored status: a failed request that never reached a provider (no
   -- attempt: a policy, the wallet or the request itself refused it), charged nothing.
   and ($5::text is null or status = $5::text or ($5::text = 'refused' and status = 'failed' and attempts = '[]'))
   and ($6::text is null or model_id = $6::text)
   and ($7::boolean is null or streamed = $7::boolean)
   and ($8::timestamptz is null or created_at >= $8::timestamptz)
   and ($9::timestamptz is null or created_at < $9::timestamptz)
   and ($10::text is null or (created_at, id) < ($10::text::timestamptz, $11::text))
   -- Implied by the row comparison, but PostgreSQL prunes partitions only on a plain
   -- comparison of the partition key: this one leaves out the months after the position.
   and ($10::text is null or created_at <= $10::text::timestamptz)
 order by created_at desc, id desc
 limit $3 offset $4;

-- name: findNamespaceRequestPosition
-- Where a record of the namespace ($3, its id) stands in the history: its exact
-- created_at as text (microseconds kept) and id, for listNamespaceRequests' $10/$11.
-- The key is (id, created_at), so this is one probe of each month's key index.
-- Another namespace's or tenant's record, like a missing one, is no row.
select created_at::text as created_at, id
  from requests
 where account_id = $1 and namespace_id = $2 and id = $3;

-- name: findNamespaceRequest
-- One record of the namespace by its record id ($3), with what the detail adds to the
-- history's fields: every warning and every attempt (null before 0028).
select id, request_id, api_key_id, oauth_token_id, billing_status, created_at, completed_at, prompt_tokens, completion_tokens,
       final_charge_micro_usd, finish_reason, first_token_kind, funding_source,
       generation_duration_ms, request_duration_ms, upstream_duration_ms, ttft_ms,
       model_id, provider_id, routing_profile, status, status_code, streamed,
       used_capabilities, usage_evidence::json as usage_evidence,
       (select w from json_array_elements(warnings::json) w where w->>'code' = 'refused_by_policy' limit 1) as refusal,
       (select w->>'field' from json_array_elements(warnings::json) w where w->>'code' = 'routing_preset' limit 1) as routing_preset,
       warnings::json as warnings, attempts::json as attempts
  from requests
 where account_id = $1 and namespace_id = $2 and id = $3;

-- name: namespaceUsage
-- One namespace over [$3, $4): its whole UTC days [$5, $6) from the day rollups (migration
-- 0034), the whole hours of the partial days at the edges, [$7, $5) and [$6, $8), from the
-- hour rollups (0035), and only the partial hours left, [$3, $7) and [$8, $4), from the
-- records (src/db/queries/rollup-window.ts), so the answer is the records' whatever the
-- window and at most two hours of records are read (not two days: 107-169 ms at 1,000,000
-- records, docs/architecture.md). A
-- request's charge is its immutable billing-audit charge when one exists (records written
-- before migration 0030), else the charge on the request row; a request whose charge is
-- still null is a billing anomaly (counted, never summed as 0).
with edge_requests as (
  select r.id, r.prompt_tokens, r.completion_tokens, r.used_capabilities,
         coalesce(a.charge_micro_usd, r.final_charge_micro_usd) as charge_micro_usd
    from requests r
    left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
   where r.account_id = $1 and r.namespace_id = $2
     and r.created_at >= $3::timestamptz and r.created_at < $7::timestamptz
  union all
  select r.id, r.prompt_tokens, r.completion_tokens, r.used_capabilities,
         coalesce(a.charge_micro_usd, r.final_charge_micro_usd) as charge_micro_usd
    from requests r
    left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
   where r.account_id = $1 and r.namespace_id = $2
     and r.created_at >= $8::timestamptz and r.created_at < $4::timestamptz
), sums as (
  select request_count, prompt_tokens, completion_tokens, spend_micro_usd, unknown_charge_count
    from request_usage_days
   where account_id = $1 and namespace_id = $2
     and day >= ($5::timestamptz at time zone 'UTC')::date and day < ($6::timestamptz at time zone 'UTC')::date
  union all
  select request_count, prompt_tokens, completion_tokens, spend_micro_usd, unknown_charge_count
    from request_usage_hours
   where account_id = $1 and namespace_id = $2
     and ((hour >= $7::timestamptz and hour < $5::timestamptz) or (hour >= $6::timestamptz and hour < $8::timestamptz))
  union all
  select 1, prompt_tokens, completion_tokens, coalesce(charge_micro_usd, 0), (charge_micro_usd is null)::int
    from edge_requests
  union all
  -- Refusals counted without a record of their own (migration 0036), in the window when
  -- their minute starts in it: requests too, charged nothing.
  select count, 0, 0, 0, 0
    from refused_request_counts
   where account_id = $1 and namespace_id = $2 and minute >= $3::timestamptz and minute < $4::timestamptz
), capabilities as (
  select capability, sum(request_count)::bigint as request_count
    from (select capability, request_count
            from request_capability_days
           where account_id = $1 and namespace_id = $2
             and day >= ($5::timestamptz at time zone 'UTC')::date and day < ($6::timestamptz at time zone 'UTC')::date
          union all
          select capability, request_count
            from request_capability_hours
           where account_id = $1 and namespace_id = $2
             and ((hour >= $7::timestamptz and hour < $5::timestamptz) or (hour >= $6::timestamptz and hour < $8::timestamptz))
          union all
          select capability, count(distinct e.id)
            from edge_requests e, unnest(e.used_capabilities) as capability
           group by capability) c
   group by capability
)
select coalesce(sum(request_count), 0)::bigint as request_count,
       coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens,
       coalesce(sum(completion_tokens), 0)::bigint as completion_tokens,
       coalesce(sum(spend_micro_usd), 0)::bigint as spend_micro_usd,
       coalesce(sum(unknown_charge_count), 0)::bigint as billing_anomalies,
       coalesce((select jsonb_object_agg(capability, request_count) from capabilities), '{}'::jsonb) as capability_request_counts
  from sums;

-- name: unrecordedRefusals
-- One namespace's refusals over [$3, $4) that were counted without a record of their own
-- (migration 0036; a count is in the window when its minute starts in it), by API key and
-- status: what the console's overview adds to the refusals it reads from the history.
select api_key_id, status_code, sum(count)::bigint as count
  from refused_request_counts
 where account_id = $1 and namespace_id = $2 and minute >= $3::timestamptz and minute < $4::timestamptz
 group by api_key_id, status_code
 order by api_key_id nulls last, status_code;

-- name: dailyNamespaceUsage
-- One namespace over [$3, $4) by UTC day, and by $5 (model, api_key, provider; null:
-- no grouping, the group is null): whole days [$6, $7) from the day rollups, the whole
-- hours [$8, $6) and [$7, $9) from the hour rollups, the partial hours at the edges,
-- [$3, $8) and [$9, $4), from the records, as namespaceUsage. The charges are namespaceUsage's (the
-- billing-audit charge, else the row's; an unknown one adds nothing), so the rows sum to it
-- for the same window. Days without requests have no row.
with days as (
  select day,
         case $5::text when 'model' then model_id when 'api_key' then api_key_id when 'provider' then provider_id end as grouped_by,
         request_count, prompt_tokens, completion_tokens, spend_micro_usd
    from request_usage_days
   where account_id = $1 and namespace_id = $2
     and day >= ($6::timestamptz at time zone 'UTC')::date and day < ($7::timestamptz at time zone 'UTC')::date
  union all
  select (hour at time zone 'UTC')::date,
         case $5::text when 'model' then model_id when 'api_key' then api_key_id when 'provider' then provider_id end,
         request_count, prompt_tokens, completion_tokens, spend_micro_usd
    from request_usage_hours
   where account_id = $1 and namespace_id = $2
     and ((hour >= $8::timestamptz and hour < $6::timestamptz) or (hour >= $7::timestamptz and hour < $9::timestamptz))
  union all
  select (r.created_at at time zone 'UTC')::date,
         case $5::text when 'model' then r.model_id when 'api_key' then r.api_key_id when 'provider' then r.provider_id end,
         1, r.prompt_tokens, r.completion_tokens, coalesce(a.charge_micro_usd, r.final_charge_micro_usd, 0)
    from requests r
    left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
   where r.account_id = $1 and r.namespace_id = $2
     and r.created_at >= $3::timestamptz and r.created_at < $8::timestamptz
  union all
  select (r.created_at at time zone 'UTC')::date,
         case $5::text when 'model' then r.model_id when 'api_key' then r.api_key_id when 'provider' then r.provider_id end,
         1, r.prompt_tokens, r.completion_tokens, coalesce(a.charge_micro_usd, r.final_charge_micro_usd, 0)
    from requests r
    left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
   where r.account_id = $1 and r.namespace_id = $2
     and r.created_at >= $9::timestamptz and r.created_at < $4::timestamptz
  union all
  -- Refusals counted without a record (migration 0036), by the day of their minute; none
  -- has a provider.
  select (minute at time zone 'UTC')::date,
         case $5::text when 'model' then model_id when 'api_key' then api_key_id end,
         count, 0, 0, 0
    from refused_request_counts
   where account_id = $1 and namespace_id = $2
     and minute >= $3::timestamptz and minute < $4::timestamptz
)
select to_char(day, 'YYYY-MM-DD') as date,
       grouped_by as "group",
       sum(request_count)::bigint as request_count,
       coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens,
       coalesce(sum(completion_tokens), 0)::bigint as completion_tokens,
       coalesce(sum(spend_micro_usd), 0)::bigint as spend_micro_usd
  from days
 group by 1, 2
 order by 1, 2 nulls last;

-- name: accountUsage
-- The whole account over [$3, $4) ($2 null), or one namespace for a namespace-bound
-- credential ($2 set). Request rows give counts and tokens; the wallet ledger's
-- `usage` and `pending_debit_recovery` entries (debits, negative) give the spend. Both
-- take their whole UTC days [$5, $6) from the rollups and the partial days at the edges
-- from the rows, as namespaceUsage. The edge records are read by namespace (the history's
-- index: there is no index by account and time); the namespaces are those the rollups
-- have on the edge days, which every record of those days is counted in.
with edge_namespaces as (
  select distinct namespace_id
    from request_usage_days
   where account_id = $1 and ($2::text is null or namespace_id = $2::text)
     and day in (($3::timestamptz at time zone 'UTC')::date, ($6::timestamptz at time zone 'UTC')::date)
), edge_requests as (
  select r.id, r.account_id, r.final_charge_micro_usd, r.prompt_tokens, r.completion_tokens
    from edge_namespaces n
    join requests r on r.namespace_id = n.namespace_id
   where r.account_id = $1 and r.created_at >= $3::timestamptz and r.created_at < $5::timestamptz
  union all
  select r.id, r.account_id, r.final_charge_micro_usd, r.prompt_tokens, r.completion_tokens
    from edge_namespaces n
    join requests r on r.namespace_id = n.namespace_id
   where r.account_id = $1 and r.created_at >= $6::timestamptz and r.created_at < $4::timestamptz
  union all
  -- Records of no namespace (an account that had no live namespace), when there are any.
  select r.id, r.account_id, r.final_charge_micro_usd, r.prompt_tokens, r.completion_tokens
    from requests r
   where exists (select 1 from edge_namespaces where namespace_id is null)
     and r.account_id = $1 and r.namespace_id is null
     and ((r.created_at >= $3::timestamptz and r.created_at < $5::timestamptz)
       or (r.created_at >= $6::timestamptz and r.created_at < $4::timestamptz))
), window_requests as (
  select coalesce(sum(request_count), 0)::bigint as request_count,
         coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens,
         coalesce(sum(completion_tokens), 0)::bigint as completion_tokens,
         coalesce(sum(billing_anomalies), 0)::bigint as billing_anomalies
    from (select request_count, prompt_tokens, completion_tokens, unknown_charge_count as billing_anomalies
            from request_usage_days
           where account_id = $1 and ($2::text is null or namespace_id = $2::text)
             and day >= ($5::timestamptz at time zone 'UTC')::date and day < ($6::timestamptz at time zone 'UTC')::date
          union all
          select 1, e.prompt_tokens, e.completion_tokens,
                 (e.final_charge_micro_usd is null
                  and not exists (select 1 from billing_audit a
                                   where a.request_record_id = e.id and a.account_id = e.account_id))::int
            from edge_requests e
          union all
          -- Refusals counted without a record (migration 0036), by the minute they start in.
          select count, 0, 0, 0
            from refused_request_counts
           where account_id = $1 and ($2::text is null or namespace_id = $2::text)
             and minute >= $3::timestamptz and minute < $4::timestamptz) s
), window_ledger as (
  select coalesce(sum(amount) filter (where kind = 'usage'), 0)::bigint as usage_amount_micro_usd,
         coalesce(sum(entries) filter (where kind = 'usage'), 0)::bigint as usage_count,
         coalesce(sum(amount) filter (where kind = 'pending_debit_recovery'), 0)::bigint as pending_debit_recovery_amount_micro_usd,
         coalesce(sum(entries) filter (where kind = 'pending_debit_recovery'), 0)::bigint as pending_debit_recovery_count
    from (select kind, amount_micro_usd as amount, entry_count as entries
            from ledger_usage_days
           where account_id = $1 and ($2::text is null or namespace_id = $2::text)
             and day >= ($5::timestamptz at time zone 'UTC')::date and day < ($6::timestamptz at time zone 'UTC')::date
          union all
          select kind, amount_micro_usd, 1
            from ledger_entries
           where account_id = $1 and ($2::text is null or namespace_id = $2::text)
             and kind in ('usage', 'pending_debit_recovery')
             and created_at >= $3::timestamptz and created_at < $5::timestamptz
          union all
          select kind, amount_micro_usd, 1
            from ledger_entries
           where account_id = $1 and ($2::text is null or namespace_id = $2::text)
             and kind in ('usage', 'pending_debit_recovery')
             and created_at >= $6::timestamptz and created_at < $4::timestamptz) l
)
select * from window_requests, window_ledger;

-- name: findSettlement
-- The newest record carrying the client-visible request id, within the account
-- and, for a namespace-bound credential ($3 set), within its namespace
-- (served by requests_account_request_id).
select r.request_id, r.billing_status, r.model_id, r.provider_id,
       r.prompt_tokens, r.completion_tokens, r.reasoning_tokens, r.cache_read_tokens, r.cache_write_tokens,
       coalesce(a.charge_micro_usd, r.final_charge_micro_usd) as charge_micro_usd
  from requests r
  left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
 where r.account_id = $1 and r.request_id = $2 and ($3::text is null or r.namespace_id = $3::text)
 order by r.created_at desc, r.id desc
 limit 1;
