-- Wallet leases: an instance reserves a chunk of an account's available balance and
-- admits requests against it locally, so admission costs no database round trip per
-- request. wallets.reserved_micro_usd is the sum of live lease amounts. A lease that is
-- not renewed (its instance died) expires and any instance's sweep returns its amount.
create table wallet_leases (
  id               text primary key,
  account_id       text not null references accounts(id),
  amount_micro_usd bigint not null,
  expires_at       timestamptz not null,
  created_at       timestamptz not null default now()
);
create index wallet_leases_expires on wallet_leases (expires_at);

-- A usage entry names the lease its request was admitted against; its charge leaves
-- the lease (and the reservation) in the same statement that debits the balance.
alter table ledger_entries add column lease_id text;
