-- name: ping
-- Answers when the database does (GET /health).
select 1;

-- name: appliedMigrationVersions
-- The migrations this database has applied (GET /ready compares them with the code's).
select version from schema_migrations;
