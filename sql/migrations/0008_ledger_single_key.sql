-- A request's ledger entry is keyed `le_<request record id>`: one per request, so the
-- primary key already makes a retried batch idempotent (applyLedgerEntries conflicts on
-- it). The second unique index on (request_record_id, kind) cost an index insert per
-- request and added nothing.
alter table ledger_entries drop constraint if exists ledger_entries_request_record_id_kind_key;
