-- name: insertApiKey
insert into api_keys (id, account_id, namespace_id, display_name, key_prefix, token_hash, scopes, expires_at)
values ($1, $2, $3, $4, $5, $6, $7, $8)
returning id, display_name, key_prefix, scopes, expires_at, last_used_at, revoked_at, created_at;

-- name: findApiKeyForAuth
-- A key of a deleted account never authenticates, even if its revocation was missed.
select k.id, k.account_id, k.namespace_id, k.token_hash, k.scopes, k.expires_at, k.revoked_at
  from api_keys k
  join accounts a on a.id = k.account_id
 where k.id = $1 and a.deleted_at is null;

-- name: listNamespaceKeys
select id, display_name, key_prefix, scopes, expires_at, last_used_at, revoked_at, created_at
  from api_keys
 where namespace_id = $1 and account_id = $2
 order by created_at, id;

-- name: revokeNamespaceKey
update api_keys set revoked_at = coalesce(revoked_at, now())
 where id = $1 and namespace_id = $2 and account_id = $3
returning id;

-- name: lockKeysForTouch
-- Before touchKeysLastUsed, in its transaction: the rows in id order. Every instance
-- flushes the keys its requests used, and the batches overlap; rows updated in the order
-- of each batch would deadlock between instances.
select id from api_keys where id = any($1::text[]) order by id for update;

-- name: touchKeysLastUsed
-- One statement for a whole batch of keys: ids and times as parallel arrays.
update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, u.used_at), u.used_at)
  from unnest($1::text[], $2::timestamptz[]) as u(id, used_at)
 where k.id = u.id;
