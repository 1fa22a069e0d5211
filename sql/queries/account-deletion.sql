-- Deleting an account (DELETE /v1/account): every statement runs in one transaction,
-- in this order, after lockLiveAccount.

-- name: lockLiveAccount
select id from accounts where id = $1 and deleted_at is null for update;

-- name: lockAccountKeys
-- The account's keys in id order, the order last_used_at flushes lock them in.
select id from api_keys where account_id = $1 order by id for update;

-- name: revokeAccountKeys
update api_keys set revoked_at = coalesce(revoked_at, now())
 where account_id = $1
returning id;

-- name: revokeAccountOauthGrants
update oauth_tokens set revoked_at = coalesce(revoked_at, now())
 where account_id = $1
returning id;

-- name: deleteAccountDeviceCodes
-- Approved but not yet exchanged device codes carry the account; pending ones carry none.
delete from oauth_device_codes where account_id = $1;

-- name: deleteAccountAuthorizationCodes
delete from oauth_authorization_codes where account_id = $1;

-- name: deleteAccountByokKeys
delete from byok_keys where account_id = $1
returning provider_name;

-- name: archiveAccountNamespaces
update namespaces set archived_at = now()
 where account_id = $1 and archived_at is null
returning id;

-- name: destroyAccountOauthClients
delete from oauth_clients where account_id = $1;

-- name: destroyAccountPolicyBindings
delete from policy_bindings
 where policy_id in (select id from policies where account_id = $1)
    or (principal_type = 'namespace' and principal_id in (select id from namespaces where account_id = $1));

-- name: destroyAccountPolicies
delete from policies where account_id = $1
returning id;

-- name: deleteAccountConsoleSessions
delete from console_sessions where account_id = $1;

-- name: tombstoneAccount
-- The row stays (usage history points at it); the email is freed for a new account.
update accounts
   set deleted_at = now(), email = 'deleted+' || id || '@invalid', display_name = null, password_hash = null
 where id = $1;
