-- Requests refused before admission (a body that does not decode, an unknown model or
-- preset, no way to fund the model) past each account's sample of full records: counted
-- here by account, UTC day and status instead of one request record each, so a client
-- looping on a bad request cannot grow the request table without bound
-- (docs/architecture.md "Metering", "Refused requests"). `count` is the refusals that
-- have no record of their own: the records of the day plus this count are every such
-- refusal.
create table if not exists refused_request_counts (
  account_id text collate "C" not null,
  day date not null,
  status_code integer not null,
  count bigint not null,
  primary key (account_id, day, status_code)
);
