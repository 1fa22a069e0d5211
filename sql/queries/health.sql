-- name: ping
-- Answers when the database does (GET /health).
select 1;
