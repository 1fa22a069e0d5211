-- Metering rows PostgreSQL refused for their data (SQLSTATE class 22, 23 or 54), which
-- no retry can fix. The write buffer isolates them from the rest of their batch, which
-- commits, and keeps them here instead of retrying them forever (src/metering/README.md).
-- `row_values` is the row as JSON text with NUL and lone surrogates left escaped
-- (`\u0000`, `\ud800`) and long strings cut: plain text, never re-parsed by a query, so
-- it is always storable. Nothing reads this table on a request path; it is for operators.
create table metering_dead_letters (
  id                bigint generated always as identity primary key,
  created_at        timestamptz not null default now(),
  -- The destination table the row was written to: requests, usage_frames, billing_audit, ledger_entries.
  table_name        text not null,
  -- The request the row belongs to (its record id), so its other rows can be found.
  request_record_id text collate "C",
  row_values        text not null,
  error_code        text,
  error_message     text
);
