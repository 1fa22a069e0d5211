-- A BYOK key written by a credential bound to a namespace applies to that namespace alone
-- (README "BYOK"): namespace_id names it; null is a key of the whole account, written by an
-- account-wide credential or the console. Every key stored before this is account-wide.
--
-- One key per provider for the account as a whole, and one per provider for each
-- namespace: two partial unique indexes, since a primary key cannot hold a null.
-- Upserts name the one they conflict on (`on conflict (…) where …`).

alter table byok_keys add column namespace_id text collate "C" references namespaces(id) on delete cascade;

alter table byok_keys drop constraint byok_keys_pkey;

create unique index byok_keys_account_wide on byok_keys (account_id, provider_name) where namespace_id is null;
create unique index byok_keys_per_namespace on byok_keys (account_id, namespace_id, provider_name) where namespace_id is not null;
