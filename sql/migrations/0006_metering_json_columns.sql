-- Metering documents are stored as `json`, not `jsonb`: they are written once and read
-- back whole, never queried inside, and PostgreSQL spends most of a request record's
-- insert CPU building jsonb from them. `json` keeps the text as sent (validated).
alter table requests
  alter column usage_evidence type json using usage_evidence::json,
  alter column warnings drop default,
  alter column warnings type json using warnings::json,
  alter column warnings set default '[]';
alter table usage_frames alter column usage type json using usage::json;
alter table billing_audit
  alter column pricing type json using pricing::json,
  alter column buckets type json using buckets::json;
