-- name: insertApiKey
insert into api_keys (id, account_id, namespace_id, display_name, key_prefix, token_hash, scopes, expires_at, parent_api_key_id, parent_oauth_grant_id)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
returning id, display_name, key_prefix, scopes, expires_at, last_used_at, revoked_at, created_at;

-- name: findApiKeyForAuth
-- A key of a deleted account never authenticates, even if its revocation was missed.
-- A derived key also carries its ancestors: the keys that minted it, nearest first, and
-- the OAuth grant at the root of the chain if a token minted it (and that grant's client);
-- ancestor_dead when one
-- of them is revoked, expired or gone (a derived key dies with its parent).
with recursive chain (id, parent_api_key_id, parent_oauth_grant_id, alive, depth) as (
  select k.id, k.parent_api_key_id, k.parent_oauth_grant_id, true, 0 from api_keys k where k.id = $1
  union all
  select p.id, p.parent_api_key_id, p.parent_oauth_grant_id,
         p.revoked_at is null and (p.expires_at is null or p.expires_at > now()), c.depth + 1
    from api_keys p join chain c on p.id = c.parent_api_key_id
   where c.depth < 64
)
select k.id, k.account_id, k.namespace_id, k.token_hash, k.scopes, k.expires_at, k.revoked_at,
       coalesce((select array_agg(c.id order by c.depth) from chain c where c.depth > 0), '{}') as ancestor_key_ids,
       (select c.parent_oauth_grant_id from chain c where c.parent_oauth_grant_id is not null order by c.depth limit 1) as ancestor_grant_id,
       (select g.oauth_client_ref from chain c join oauth_tokens g on g.id = c.parent_oauth_grant_id
         order by c.depth limit 1) as ancestor_client_id,
       exists (select 1 from chain c where c.depth > 0 and not c.alive)
       or exists (select 1 from chain c where c.parent_api_key_id is not null
                     and not exists (select 1 from api_keys p where p.id = c.parent_api_key_id))
       or exists (select 1 from chain c where c.parent_oauth_grant_id is not null
                     and not exists (select 1 from oauth_tokens g where g.id = c.parent_oauth_grant_id and g.revoked_at is null))
       as ancestor_dead
  from api_keys k
  join accounts a on a.id = k.account_id
 where k.id = $1 and a.deleted_at is null;

-- name: listNamespaceKeys
select id, display_name, key_prefix, scopes, expires_at, last_used_at, revoked_at, created_at
  from api_keys
 where namespace_id = $1 and account_id = $2
 order by created_at, id;

-- name: listAccountWideKeys
-- The account's keys bound to no namespace (the one POST /admin/accounts issues), which
-- act in every namespace of the account.
select id, display_name, key_prefix, scopes, expires_at, last_used_at, revoked_at, created_at
  from api_keys
 where account_id = $1 and namespace_id is null
 order by created_at, id;

-- name: revokeAccountWideKey
update api_keys set revoked_at = coalesce(revoked_at, now())
 where id = $1 and account_id = $2 and namespace_id is null
returning id;

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
