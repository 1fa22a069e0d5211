-- GET /v1/account/keys lists an account's keys bound to no namespace. api_keys_namespace
-- would read every account's (one per account at least) to find them.
create index api_keys_account_wide on api_keys (account_id, created_at) where namespace_id is null;
