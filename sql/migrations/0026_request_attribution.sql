-- two-step: not needed. The index build blocks writes to requests while it runs, not reads; the version still running keeps serving and its write buffer holds the records and retries them. On a very large table, build it by hand first with CREATE INDEX CONCURRENTLY: IF NOT EXISTS then skips it here.
-- Request attribution: which credential made each request. A record carries the API
-- key's id (`api_key_id`, as GET …/keys lists it) or the OAuth grant's id
-- (`oauth_token_id`, as GET …/oauth/tokens lists it), the other null.
--
-- `api_key_id` exists since 0002, but until now it held the id of whichever credential
-- made the request, an OAuth grant's id (`og_…`) included. Those move to the new
-- column; records written before either existed keep null. Only ADD COLUMN and a plain
-- UPDATE, both of which work on a plain and on a partitioned `requests` alike.
alter table requests add column if not exists api_key_id text collate "C";
alter table requests add column if not exists oauth_token_id text collate "C";

update requests set oauth_token_id = api_key_id, api_key_id = null where api_key_id like 'og\_%';

-- The history filter on one key (GET …/requests?api_key_id=) reads this index's range
-- for (namespace, key) newest first instead of walking the whole namespace. It costs one
-- more index insert per request record. Nothing filters on oauth_token_id: no index.
create index if not exists requests_namespace_api_key_created on requests (namespace_id, api_key_id, created_at desc, id desc);
