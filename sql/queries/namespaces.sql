-- name: insertNamespace
insert into namespaces (id, account_id, name) values ($1, $2, $3)
returning id, name, created_at;

-- name: listLiveNamespaces
select id, name, created_at from namespaces
 where account_id = $1 and archived_at is null
 order by created_at, id;

-- name: findLiveNamespace
select id, account_id, name, created_at from namespaces
 where id = $1 and account_id = $2 and archived_at is null;

-- name: oldestLiveNamespace
select id from namespaces
 where account_id = $1 and archived_at is null
 order by created_at, id limit 1;

-- name: countLiveNamespacesForUpdate
-- Locks the account's live namespace rows, so two concurrent deletes cannot both
-- pass the "not the last namespace" check.
select id from namespaces where account_id = $1 and archived_at is null order by id for update;

-- name: archiveNamespace
update namespaces set archived_at = now() where id = $1 and account_id = $2 and archived_at is null
returning id;

-- name: lockNamespaceKeys
-- Before destroyNamespaceKeys: the keys in id order, the order last_used_at flushes lock
-- them in (lockKeysForTouch); deleted in whatever order the plan finds them, they could
-- deadlock with a flush.
select id from api_keys where namespace_id = $1 order by id for update;

-- name: destroyNamespaceKeys
delete from api_keys where namespace_id = $1 returning id;

-- name: lockNamespaceOauthTokens
-- Before destroyNamespaceOauthTokens, for the same reason as lockNamespaceKeys
-- (lockOauthGrantsForTouch locks grants in id order).
select id from oauth_tokens where namespace_id = $1 order by id for update;

-- name: destroyNamespaceOauthTokens
delete from oauth_tokens where namespace_id = $1 returning id;

-- name: destroyNamespaceOauthClients
delete from oauth_clients where namespace_id = $1;

-- name: destroyNamespacePolicyBindings
-- Bindings of the namespace's own policies, and bindings that name the namespace as principal.
delete from policy_bindings
 where policy_id in (select id from policies where namespace_id = $1)
    or (principal_type = 'namespace' and principal_id = $1);

-- name: destroyNamespacePolicies
delete from policies where namespace_id = $1;

-- name: destroyNamespaceByokKeys
-- The namespace's own BYOK keys (the account's, namespace_id null, stay).
delete from byok_keys where namespace_id = $1;
