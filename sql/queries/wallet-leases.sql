-- Lock order. A grant, a settlement (the write buffer's ledger flush), a return and a
-- sweep each change a wallet row and lease rows. Every one of them locks the wallet rows
-- first, in account order, then the lease rows, in id order; taken in opposite orders
-- (a grant: wallet then lease; a settlement: lease then wallet) they deadlock under load,
-- and PostgreSQL aborts one: a 503 at admission or a failed flush.

-- name: lockWallets
select account_id from wallets where account_id = any($1::text[]) order by account_id for update;

-- name: lockLeases
select id from wallet_leases where id = any($1::text[]) order by id for update;

-- name: lockExpiredLeases
-- The expired leases of wallets this transaction has locked (lockWallets), in id order.
select id from wallet_leases where expires_at < now() and account_id = any($1::text[]) order by id for update;

-- name: accountsWithExpiredLeases
select distinct account_id from wallet_leases where expires_at < now();

-- name: acquireLease
-- Grants this instance's lease at least $2 (what the waiting request still needs) in one
-- statement: the wallet row is locked, so concurrent grants on every instance together
-- never exceed the balance. While at least $6 is available the grant is a chunk, up to
-- half of what is available and capped at $3; below $6 the balance is low and the grant
-- is exactly $2, a per-request reservation (`per_request`), so no instance holds money
-- another one could use. The lease row is written from the wallet's update, so it is
-- locked after the wallet.
with available as (
  select account_id, balance_micro_usd - reserved_micro_usd as free
    from wallets
   where account_id = $1 and balance_micro_usd - reserved_micro_usd >= $2::bigint
   for update
), granted as (
  select account_id, free < $6::bigint as per_request,
         case when free < $6::bigint then $2::bigint
              else least(greatest($2::bigint, free / 2), $3::bigint) end as amount
    from available
), reserved as (
  update wallets w
     set reserved_micro_usd = w.reserved_micro_usd + g.amount, updated_at = now()
    from granted g
   where w.account_id = g.account_id
  returning g.amount, g.per_request
), lease as (
  insert into wallet_leases (id, account_id, amount_micro_usd, expires_at)
  select $4, $1, amount, now() + make_interval(secs => $5::int) from reserved
  on conflict (id) do update
     set amount_micro_usd = wallet_leases.amount_micro_usd + excluded.amount_micro_usd,
         expires_at = excluded.expires_at
  returning 1
)
select amount, per_request from reserved;

-- name: renewLeases
-- After lockLeases on the same ids. Returns what each lease's wallet has available, so
-- an instance holding a chunk learns that the balance became low (read, not locked).
update wallet_leases l set expires_at = now() + make_interval(secs => $2::int)
  from wallets w
 where l.id = any($1::text[]) and w.account_id = l.account_id
returning l.id, w.balance_micro_usd - w.reserved_micro_usd as free;

-- name: returnLease
-- Gives back an unused part of a lease. After lockWallets on its account.
with lease as (
  update wallet_leases set amount_micro_usd = amount_micro_usd - $2::bigint
   where id = $1
  returning account_id
)
update wallets w
   set reserved_micro_usd = greatest(w.reserved_micro_usd - $2::bigint, 0), updated_at = now()
  from lease
 where w.account_id = lease.account_id;

-- name: sweepExpiredLeases
-- Leases whose instance stopped renewing them go back to their wallets: those of $1,
-- locked by lockExpiredLeases after their wallets.
with expired as (
  delete from wallet_leases where id = any($1::text[])
  returning account_id, amount_micro_usd
), totals as (
  select account_id, sum(greatest(amount_micro_usd, 0)) as amount from expired group by account_id
)
update wallets w
   set reserved_micro_usd = greatest(w.reserved_micro_usd - totals.amount, 0), updated_at = now()
  from totals
 where w.account_id = totals.account_id;
