-- name: insertAccount
insert into accounts (id, email) values ($1, $2) returning id, email, created_at;

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
