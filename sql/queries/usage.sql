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
   and ($5::text is null or status = $5::text)
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
   and ($5::text is null or status = $5::text)
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
-- One namespace over [$3, $4). A request's charge is its immutable billing-audit
-- charge when one exists (records written before migration 0030), else the charge on
-- the request row; a request whose charge is still null is a billing anomaly
-- (counted, never summed as 0).
with window_requests as (
  select r.id, r.prompt_tokens, r.completion_tokens, r.used_capabilities,
         coalesce(a.charge_micro_usd, r.final_charge_micro_usd) as charge_micro_usd
    from requests r
    left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
   where r.account_id = $1 and r.namespace_id = $2
     and r.created_at >= $3::timestamptz and r.created_at < $4::timestamptz
), capabilities as (
  select capability, count(distinct w.id)::bigint as request_count
    from window_requests w, unnest(w.used_capabilities) as capability
   group by capability
)
select count(*)::bigint as request_count,
       coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens,
       coalesce(sum(completion_tokens), 0)::bigint as completion_tokens,
       coalesce(sum(charge_micro_usd), 0)::bigint as spend_micro_usd,
       count(*) filter (where charge_micro_usd is null)::bigint as billing_anomalies,
       coalesce((select jsonb_object_agg(capability, request_count) from capabilities), '{}'::jsonb) as capability_request_counts
  from window_requests;

-- name: dailyNamespaceUsage
-- One namespace over [$3, $4) by UTC day, and by $5 (model, api_key, provider; null:
-- no grouping, the group is null). The charges are namespaceUsage's (the billing-audit
-- charge, else the row's; an unknown one adds nothing), so the rows sum to it for the
-- same window. Days without requests have no row.
select to_char((r.created_at at time zone 'UTC')::date, 'YYYY-MM-DD') as date,
       case $5::text when 'model' then r.model_id when 'api_key' then r.api_key_id when 'provider' then r.provider_id end as "group",
       count(*)::bigint as request_count,
       coalesce(sum(r.prompt_tokens), 0)::bigint as prompt_tokens,
       coalesce(sum(r.completion_tokens), 0)::bigint as completion_tokens,
       coalesce(sum(coalesce(a.charge_micro_usd, r.final_charge_micro_usd)), 0)::bigint as spend_micro_usd
  from requests r
  left join billing_audit a on a.request_record_id = r.id and a.account_id = r.account_id
 where r.account_id = $1 and r.namespace_id = $2
   and r.created_at >= $3::timestamptz and r.created_at < $4::timestamptz
 group by 1, 2
 order by 1, 2 nulls last;

-- name: accountUsage
-- The whole account over [$3, $4) ($2 null), or one namespace for a namespace-bound
-- credential ($2 set). Request rows give counts and tokens; the wallet ledger's
-- `usage` and `pending_debit_recovery` entries (debits, negative) give the spend.
with window_requests as (
  select count(*)::bigint as request_count,
         coalesce(sum(prompt_tokens), 0)::bigint as prompt_tokens,
         coalesce(sum(completion_tokens), 0)::bigint as completion_tokens,
         count(*) filter (where final_charge_micro_usd is null
                          and not exists (select 1 from billing_audit a
                                           where a.request_record_id = r.id and a.account_id = r.account_id))::bigint as billing_anomalies
    from requests r
   where r.account_id = $1 and ($2::text is null or r.namespace_id = $2::text)
     and r.created_at >= $3::timestamptz and r.created_at < $4::timestamptz
), window_ledger as (
  select coalesce(sum(amount_micro_usd) filter (where kind = 'usage'), 0)::bigint as usage_amount_micro_usd,
         count(*) filter (where kind = 'usage')::bigint as usage_count,
         coalesce(sum(amount_micro_usd) filter (where kind = 'pending_debit_recovery'), 0)::bigint as pending_debit_recovery_amount_micro_usd,
         count(*) filter (where kind = 'pending_debit_recovery')::bigint as pending_debit_recovery_count
    from ledger_entries
   where account_id = $1 and ($2::text is null or namespace_id = $2::text)
     and kind in ('usage', 'pending_debit_recovery')
     and created_at >= $3::timestamptz and created_at < $4::timestamptz
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
