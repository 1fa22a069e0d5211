-- Every request writes these rows, so every index on them is paid per request.
--
-- The public statistics (days of succeeded requests) and GET /v1/providers (the last
-- hour of all requests) read request rows by a created_at range. Rows are appended in
-- created_at order, which is what a BRIN index is for: a few bytes per 128 pages instead
-- of a B-tree entry per row (measured: ~25 % less PostgreSQL CPU per request record).
drop index if exists requests_created_succeeded;
drop index if exists requests_created_provider;
create index requests_created_brin on requests using brin (created_at);

-- billing_audit is only ever read by request record id (its primary key).
drop index if exists billing_audit_namespace_created;
