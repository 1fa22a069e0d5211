-- One request record of a namespace, for the console's detail view: the history's
-- fields plus every warning the record kept. The tenant (account_id) and the namespace
-- are in the WHERE, so another account's request id finds nothing.

-- name: findNamespaceRequest
-- The newest record carrying the client-visible request id (served by
-- requests_account_request_id). $1 account, $2 namespace, $3 request id.
select id, request_id, api_key_id, oauth_token_id, billing_status, created_at, completed_at, prompt_tokens, completion_tokens,
       final_charge_micro_usd, finish_reason, first_token_kind, funding_source,
       generation_duration_ms, request_duration_ms, upstream_duration_ms, ttft_ms,
       model_id, provider_id, routing_profile, status, status_code, streamed,
       used_capabilities, usage_evidence::json as usage_evidence,
       (select w from json_array_elements(warnings::json) w where w->>'code' = 'refused_by_policy' limit 1) as refusal,
       (select w->>'field' from json_array_elements(warnings::json) w where w->>'code' = 'routing_preset' limit 1) as routing_preset,
       warnings::json as warnings
  from requests
 where account_id = $1 and namespace_id = $2 and request_id = $3
 order by created_at desc
 limit 1;
