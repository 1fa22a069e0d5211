-- The OAuth authorization server: grants (oauth_tokens), rotated refresh tokens,
-- device codes and authorization codes. Every token and code is looked up by its SHA-256.

-- name: insertOauthGrant
insert into oauth_tokens (id, account_id, namespace_id, client_id, oauth_client_ref, access_token_hash,
                          refresh_token_hash, scopes, expires_at, refresh_expires_at)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10);

-- name: findOauthGrantForAuth
-- The grant an access token belongs to, with what makes it unusable besides its own
-- expiry and revocation: an archived namespace, a deleted account.
select t.id, t.account_id, t.namespace_id, t.scopes, t.expires_at, t.revoked_at, t.client_id, t.oauth_client_ref,
       n.archived_at is not null as namespace_archived, a.deleted_at is not null as account_deleted
  from oauth_tokens t
  join namespaces n on n.id = t.namespace_id
  join accounts a on a.id = t.account_id
 where t.access_token_hash = $1;

-- name: lockOauthGrantByRefreshToken
-- The grant a refresh token belongs to, locked for its rotation.
select t.id, t.account_id, t.namespace_id, t.client_id, t.oauth_client_ref, t.scopes, t.refresh_expires_at,
       t.revoked_at, n.archived_at is not null as namespace_archived, a.deleted_at is not null as account_deleted
  from oauth_tokens t
  join namespaces n on n.id = t.namespace_id
  join accounts a on a.id = t.account_id
 where t.refresh_token_hash = $1
   for update of t;

-- name: findRotatedRefreshToken
select grant_id from oauth_rotated_refresh_tokens where token_hash = $1;

-- name: insertRotatedRefreshToken
insert into oauth_rotated_refresh_tokens (token_hash, grant_id) values ($1, $2)
on conflict do nothing;

-- name: rotateOauthGrant
-- A refresh: new token hashes and expiries in place, the grant's id unchanged.
update oauth_tokens
   set access_token_hash = $2, refresh_token_hash = $3, scopes = $4, expires_at = $5, refresh_expires_at = $6
 where id = $1;

-- name: findOauthGrantByToken
-- The grant whose current access or refresh token has this hash (revocation).
select id, client_id from oauth_tokens
 where access_token_hash = $1 or refresh_token_hash = $1;

-- name: revokeOauthGrant
update oauth_tokens set revoked_at = coalesce(revoked_at, now()) where id = $1
returning id;

-- name: lockOauthGrantsForTouch
-- Before touchOauthGrantsLastUsed, in its transaction: rows in id order, so instances
-- flushing overlapping batches cannot deadlock (like lockKeysForTouch).
select id from oauth_tokens where id = any($1::text[]) order by id for update;

-- name: touchOauthGrantsLastUsed
update oauth_tokens t set last_used_at = greatest(coalesce(t.last_used_at, u.used_at), u.used_at)
  from unnest($1::text[], $2::timestamptz[]) as u(id, used_at)
 where t.id = u.id;

-- name: insertDeviceCode
insert into oauth_device_codes (device_code_hash, user_code, client_id, oauth_client_ref, requested_scopes,
                                interval_secs, expires_at)
values ($1, $2, $3, $4, $5, $6, $7);

-- name: sweepDeviceCodes
-- Device codes expired before $1. They are kept a while past their expiry so a device
-- still polling hears `expired_token` rather than `invalid_grant`.
delete from oauth_device_codes where expires_at < $1;

-- name: sweepAuthorizationCodes
delete from oauth_authorization_codes where expires_at < $1;

-- name: findDeviceCodeByUserCode
select user_code, client_id, oauth_client_ref, requested_scopes, status, expires_at, created_at
  from oauth_device_codes
 where user_code = $1;

-- name: decideDeviceCode
-- Approves or denies a pending, unexpired device code; no row when it is not (any more).
update oauth_device_codes
   set status = $2, account_id = $3, namespace_id = $4, scopes = $5
 where user_code = $1 and status = 'pending' and expires_at > $6
returning user_code;

-- name: lockDeviceCode
select device_code_hash, client_id, oauth_client_ref, status, interval_secs, last_polled_at, account_id,
       namespace_id, scopes, expires_at
  from oauth_device_codes
 where device_code_hash = $1
   for update;

-- name: recordDevicePoll
update oauth_device_codes set last_polled_at = $2, interval_secs = $3 where device_code_hash = $1;

-- name: consumeDeviceCode
update oauth_device_codes set status = 'consumed', grant_id = $2 where device_code_hash = $1;

-- name: insertAuthorizationCode
insert into oauth_authorization_codes (code_hash, client_id, oauth_client_ref, account_id, namespace_id,
                                       redirect_uri, scopes, code_challenge, expires_at)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: lockAuthorizationCode
select c.code_hash, c.client_id, c.oauth_client_ref, c.account_id, c.namespace_id, c.redirect_uri, c.scopes,
       c.code_challenge, c.consumed_at, c.grant_id, c.expires_at,
       n.archived_at is not null as namespace_archived, a.deleted_at is not null as account_deleted
  from oauth_authorization_codes c
  join namespaces n on n.id = c.namespace_id
  join accounts a on a.id = c.account_id
 where c.code_hash = $1
   for update of c;

-- name: consumeAuthorizationCode
update oauth_authorization_codes set consumed_at = now(), grant_id = $2 where code_hash = $1;

-- name: destroyNamespaceDeviceCodes
delete from oauth_device_codes where namespace_id = $1;

-- name: destroyNamespaceAuthorizationCodes
delete from oauth_authorization_codes where namespace_id = $1;
