-- name: findByokCredential
-- The key a caller bound to namespace $3 (null: account-wide) uses for provider $2: its
-- namespace's own first, else the account's. `namespace_id = null` matches nothing, so an
-- account-wide caller finds the account's key alone.
select kek_id, ciphertext, api_base, namespace_id from byok_keys
 where account_id = $1 and provider_name = $2
   and (namespace_id is null or namespace_id = $3)
 order by namespace_id nulls last limit 1;

-- name: recordByokRefusal
-- $3: the key's namespace, null for the account's.
update byok_keys set last_failure_at = now(), last_failure_kind = $4
 where account_id = $1 and provider_name = $2 and namespace_id is not distinct from $3::text;

-- name: lockByokKeysForUse
-- The keys of (account, provider, namespace or '') triples, locked in one order so that
-- instances flushing overlapping batches cannot deadlock.
select 1 from byok_keys
 where (account_id, provider_name, coalesce(namespace_id, '')) in (select * from unnest($1::text[], $2::text[], $3::text[]))
 order by account_id, provider_name, namespace_id nulls first for update;

-- name: recordByokUses
-- The same triples as lockByokKeysForUse, with when each was used; a later use wins.
update byok_keys k set last_used_at = greatest(coalesce(k.last_used_at, u.at), u.at)
  from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) as u(account_id, provider_name, scope, at)
 where k.account_id = u.account_id and k.provider_name = u.provider_name and coalesce(k.namespace_id, '') = u.scope;

-- name: listByokKeysNotUnder
-- Every stored key sealed to a KEK other than $1.
select account_id, provider_name, namespace_id, kek_id, ciphertext from byok_keys where kek_id <> $1;

-- name: resealByokKey
-- Replaces the box ($1 KEK, $2 box) only if the row still holds the one read ($6, $7).
update byok_keys set kek_id = $1, ciphertext = $2
 where account_id = $3 and provider_name = $4 and namespace_id is not distinct from $5::text
   and kek_id = $6 and ciphertext = $7;

-- name: countByokKeysNotUnder
select count(*)::int as count from byok_keys where kek_id <> $1;

-- name: listByokKeys
-- $2 null: an account-wide caller sees every key of the account; else the namespace's and
-- the account's (namespace_id null), never another namespace's.
select provider_name, namespace_id, kek_id, key_prefix, api_base, created_at, updated_at, last_used_at, last_failure_at, last_failure_kind
  from byok_keys
 where account_id = $1
   and ($2::text is null or namespace_id is null or namespace_id = $2)
 order by provider_name, namespace_id nulls first;

-- name: upsertAccountByokKey
-- Each scope has its own unique index (migration 0022): this one replaces in the account's.
insert into byok_keys (account_id, namespace_id, provider_name, kek_id, ciphertext, key_prefix, api_base)
values ($1, null, $2, $3, $4, $5, $6)
on conflict (account_id, provider_name) where namespace_id is null do update set
  kek_id = excluded.kek_id, ciphertext = excluded.ciphertext, key_prefix = excluded.key_prefix,
  api_base = excluded.api_base, updated_at = now(), last_failure_at = null, last_failure_kind = null;

-- name: upsertNamespaceByokKey
-- The namespace's own key ($2), under the namespace-scoped unique index.
insert into byok_keys (account_id, namespace_id, provider_name, kek_id, ciphertext, key_prefix, api_base)
values ($1, $2, $3, $4, $5, $6, $7)
on conflict (account_id, namespace_id, provider_name) where namespace_id is not null do update set
  kek_id = excluded.kek_id, ciphertext = excluded.ciphertext, key_prefix = excluded.key_prefix,
  api_base = excluded.api_base, updated_at = now(), last_failure_at = null, last_failure_kind = null;

-- name: deleteByokKey
-- $3: the key's namespace, null for the account's.
delete from byok_keys
 where account_id = $1 and provider_name = $2 and namespace_id is not distinct from $3::text;
