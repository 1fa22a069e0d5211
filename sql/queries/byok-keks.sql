-- name: currentKek
select kek_id, public_key, created_at from byok_keks where is_current;

-- name: insertFirstCurrentKek
-- A concurrent creator's row wins the partial unique index; this one is dropped.
insert into byok_keks (kek_id, public_key, wrapped_private_key, is_current)
values ($1, $2, $3, true) on conflict (is_current) where is_current do nothing;

-- name: lockKekRotation
-- Serialises rotations across instances, for the rest of the transaction ($1: the lock key).
select pg_advisory_xact_lock($1::bigint);

-- name: retireCurrentKek
update byok_keks set is_current = false, retired_at = now() where is_current;

-- name: insertCurrentKek
insert into byok_keks (kek_id, public_key, wrapped_private_key, is_current) values ($1, $2, $3, true);

-- name: findKek
select kek_id, public_key, wrapped_private_key, created_at from byok_keks where kek_id = $1;
