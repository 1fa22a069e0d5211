-- The metering documents are written as JSON text the gateway produced itself
-- (JSON.stringify) and read back whole, never queried inside. As `json`, PostgreSQL
-- re-parses every one to validate it: ~9 µs of its CPU per request record (measured), a
-- fifth of what metering costs it. As `text` they are stored as sent; the one query that
-- returns them casts to json on the way out.
alter table requests
  alter column usage_evidence type text,
  alter column warnings drop default,
  alter column warnings type text,
  alter column warnings set default '[]';
alter table usage_frames alter column usage type text;
alter table billing_audit
  alter column pricing type text,
  alter column buckets type text;
