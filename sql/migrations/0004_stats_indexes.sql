-- GET /v1/providers reads the last hour of requests of every status (current_rpm and
-- cache hit rate); requests_created_succeeded only covers succeeded rows.
create index requests_created_provider on requests (created_at, provider_id);
