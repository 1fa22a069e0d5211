-- Derived credentials: a key minted by a key or by an OAuth access token remembers its
-- parent, so that it dies with it (revocation, expiry) and answers to the policies bound
-- to it. Keys minted by the operator or in the console have neither. No foreign keys:
-- a namespace's deletion removes parents and children together, and a grant row is
-- only ever revoked, never deleted while its keys live.
alter table api_keys
  add column parent_api_key_id text collate "C",
  add column parent_oauth_grant_id text collate "C";

create index api_keys_parent_key on api_keys (parent_api_key_id) where parent_api_key_id is not null;
create index api_keys_parent_grant on api_keys (parent_oauth_grant_id) where parent_oauth_grant_id is not null;
