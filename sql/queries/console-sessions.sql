-- name: insertConsoleSession
-- Only while account $2 still has the password hash $5 the sign-in verified. The share
-- lock waits for a password change in progress and then sees its new hash, so a sign-in
-- with the old password that finishes during a reset cannot leave a session behind the
-- reset's sign-out of every session.
insert into console_sessions (token_hash, account_id, csrf_secret, expires_at)
select $1, a.id, $3, $4
  from accounts a
 where a.id = $2 and a.password_hash = $5 and a.deleted_at is null
   for share
returning token_hash;

-- name: findConsoleSession
-- A live session of a live account. A deleted account's sessions are deleted with it;
-- the join also refuses any that a concurrent sign-in could have left.
select s.account_id, s.csrf_secret, s.expires_at, s.created_at, s.last_seen_at, a.email, a.display_name
  from console_sessions s
  join accounts a on a.id = s.account_id
 where s.token_hash = $1 and s.expires_at > now() and a.deleted_at is null;

-- name: extendConsoleSession
-- Sliding lifetime: a session in use moves its expiry forward (never past its cap,
-- which the caller has applied to $2).
update console_sessions set expires_at = $2, last_seen_at = now()
 where token_hash = $1 and expires_at > now();

-- name: deleteConsoleSession
delete from console_sessions where token_hash = $1;

-- name: deleteExpiredConsoleSessions
-- Swept at sign-in: a session past its expiry can never be used again.
delete from console_sessions where account_id = $1 and expires_at <= now();

-- name: ensureConsoleSigningKey
insert into console_signing_keys (purpose, secret) values ($1, $2)
on conflict (purpose) do nothing;

-- name: findConsoleSigningKey
select secret from console_signing_keys where purpose = $1;

-- name: setConsoleFlash
-- Replaces any message not yet shown: only the latest form's outcome is shown.
update console_sessions set flash = $2
 where token_hash = $1 and expires_at > now();

-- name: takeConsoleFlash
-- Reads and clears in one statement under the row lock, so two loads of the page at once
-- cannot both show the message.
update console_sessions s set flash = null
  from (select token_hash, flash from console_sessions where token_hash = $1 and flash is not null for update) taken
 where s.token_hash = taken.token_hash
returning taken.flash;
