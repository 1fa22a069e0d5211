-- The console's sign-in: a server-wide signing key for the sign-in form's CSRF token
-- (the only form shown before a session exists), shared by every instance through the
-- database, and an index for the case-insensitive email lookup of sign-in.

-- One row per purpose ('sign-in-csrf'); created by the first instance that needs it
-- (insert … on conflict do nothing), then read once per process.
create table console_signing_keys (
  purpose    text primary key,
  secret     bytea not null,
  created_at timestamptz not null default now()
);

-- Sign-in matches the email case-insensitively, among live accounts only.
create index accounts_email_lower on accounts (lower(email)) where deleted_at is null;
