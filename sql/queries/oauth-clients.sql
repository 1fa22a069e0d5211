-- name: findOauthClientByClientId
-- A registered client by its public client id (`brc_…`), for the authorization server.
-- Clients of an archived namespace were destroyed with it, so every row here is live.
select id, account_id, namespace_id, client_id, client_name, client_type, client_secret_hash,
       redirect_uris, allowed_scopes, allowed_grant_types, created_at
  from oauth_clients
 where client_id = $1;
