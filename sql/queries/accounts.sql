-- name: insertAccount
-- $3: the argon2id password hash, or null for an account that signs in only with keys.
insert into accounts (id, email, password_hash) values ($1, $2, $3) returning id, email, created_at;

-- name: insertWallet
insert into wallets (account_id, balance_micro_usd) values ($1, $2);

-- name: creditWallet
-- One statement: the balance change and its audit row commit together or not at all.
-- A balance never passes 2^53 - 1 ($3): balances are read as exact JS numbers.
with updated as (
  update wallets set balance_micro_usd = balance_micro_usd + $2, updated_at = now()
   where account_id = $1 and balance_micro_usd <= $3::bigint - $2::bigint
  returning account_id, balance_micro_usd
), audit as (
  insert into wallet_credits (account_id, amount_micro_usd)
  select account_id, $2 from updated
), ledger as (
  insert into ledger_entries (id, account_id, kind, amount_micro_usd)
  select 'le_' || replace(gen_random_uuid()::text, '-', ''), account_id, 'credit', $2 from updated
)
select balance_micro_usd from updated;

-- name: setAccountPassword
-- A new password ends every console session of the account, in the same statement: a
-- session signed in with the old password (perhaps by whoever knew it) does not survive.
with updated as (
  update accounts set password_hash = $2 where id = $1 and deleted_at is null
  returning id
), ended as (
  delete from console_sessions where account_id in (select id from updated)
)
select id from updated;

-- name: findAccountForSignIn
-- Case-insensitive, live accounts only; an exact match wins over a case variant.
select id, password_hash from accounts
 where lower(email) = lower($1) and deleted_at is null
 order by (email = $1) desc, created_at, id
 limit 1;

-- name: findLiveAccount
select id, email, display_name, created_at from accounts
 where id = $1 and deleted_at is null;

-- name: updateAccountDisplayName
update accounts set display_name = $2 where id = $1 and deleted_at is null
returning id, email, display_name, created_at;
