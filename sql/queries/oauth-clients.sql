-- name: findOauthClientByClientId
-- A registered client by its public client id (`brc_…`), for the authorization server.
-- Clients of an archived namespace were destroyed with it, so every row here is live.
select id, account_id, namespace_id, client_id, client_name, client_type, client_secret_hash,
       redirect_uris, allowed_scopes, allowed_grant_types, created_at
  from oauth_clients
 where client_id = $1;

-- name: insertOauthClient
insert into oauth_clients (id, account_id, namespace_id, client_id, client_name, client_type, client_secret_hash,
                           redirect_uris, allowed_scopes, allowed_grant_types)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
returning id, account_id, namespace_id, client_id, client_name, client_type, client_secret_hash,
          redirect_uris, allowed_scopes, allowed_grant_types, created_at;

-- name: listNamespaceOauthClients
select id, account_id, namespace_id, client_id, client_name, client_type, client_secret_hash,
       redirect_uris, allowed_scopes, allowed_grant_types, created_at
  from oauth_clients
 where namespace_id = $1 and account_id = $2
 order by created_at, id;

-- name: findNamespaceOauthClient
-- A client of the namespace by its row id or its public client id: management paths take either.
select id, account_id, namespace_id, client_id, client_name, client_type, client_secret_hash,
       redirect_uris, allowed_scopes, allowed_grant_types, created_at
  from oauth_clients
 where (id = $1 or client_id = $1) and namespace_id = $2 and account_id = $3;

-- name: updateOauthClient
-- Each list is replaced whole; a null argument leaves that attribute unchanged.
update oauth_clients
   set client_name         = coalesce($4, client_name),
       redirect_uris       = coalesce($5, redirect_uris),
       allowed_scopes      = coalesce($6, allowed_scopes),
       allowed_grant_types = coalesce($7, allowed_grant_types)
 where id = $1 and namespace_id = $2 and account_id = $3
returning id, account_id, namespace_id, client_id, client_name, client_type, client_secret_hash,
          redirect_uris, allowed_scopes, allowed_grant_types, created_at;

-- name: deleteOauthClient
delete from oauth_clients where id = $1 and namespace_id = $2 and account_id = $3 returning id;

-- name: revokeOauthClientGrants
-- A deleted client's grants die with it; their ids go to the credential caches.
update oauth_tokens set revoked_at = now() where oauth_client_ref = $1 and revoked_at is null returning id;

-- name: deleteOauthClientCodes
with devices as (delete from oauth_device_codes where oauth_client_ref = $1)
delete from oauth_authorization_codes where oauth_client_ref = $1;

-- name: deleteOauthClientBindings
delete from policy_bindings where principal_type = 'oauth_client' and principal_id = $1;

-- name: findOauthClientPrincipal
-- A registered client as a policy binding target: the account's client, with its namespace.
select id, namespace_id from oauth_clients where id = $1 and account_id = $2;

-- name: findOauthClientOwnerEmail
-- The email of the account that registered client row $1, shown on the device and consent
-- pages so a person sees who stands behind a third-party client.
select a.email
  from oauth_clients c
  join accounts a on a.id = c.account_id
 where c.id = $1;
