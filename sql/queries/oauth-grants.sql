-- name: listNamespaceOauthGrants
-- The namespace's live grants: not revoked, and the refresh token (the grant's own
-- lifetime) or the access token still valid. Registered clients' names come from their rows.
select t.id, t.client_id, c.client_name, t.scopes, t.created_at, t.last_used_at,
       greatest(t.expires_at, coalesce(t.refresh_expires_at, t.expires_at)) as expires_at
  from oauth_tokens t
  left join oauth_clients c on c.id = t.oauth_client_ref
 where t.namespace_id = $1 and t.account_id = $2 and t.revoked_at is null
   and greatest(t.expires_at, coalesce(t.refresh_expires_at, t.expires_at)) > now()
 order by t.created_at, t.id;

-- name: revokeNamespaceOauthGrant
update oauth_tokens set revoked_at = now()
 where id = $1 and namespace_id = $2 and account_id = $3 and revoked_at is null
returning id;

-- name: findOauthGrantPrincipal
-- A grant as a policy binding target: the account's live grant, its namespace and client.
select id, namespace_id, oauth_client_ref from oauth_tokens
 where id = $1 and account_id = $2 and revoked_at is null;
