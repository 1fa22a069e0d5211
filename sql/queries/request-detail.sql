-- One request record of a namespace, for the console's detail view: the whole row, its
-- usage evidence and warnings as JSON (src/db/queries/request-detail.ts picks the
-- history's fields from it). The tenant (account_id) and the namespace are in the WHERE,
-- so another account's request id finds nothing.

-- name: findNamespaceRequest
-- The newest record carrying the client-visible request id (served by
-- requests_account_request_id). $1 account, $2 namespace, $3 request id.
select r.*, r.usage_evidence::json as evidence, r.warnings::json as warning_list
  from requests r
 where r.account_id = $1 and r.namespace_id = $2 and r.request_id = $3
 order by r.created_at desc
 limit 1;
