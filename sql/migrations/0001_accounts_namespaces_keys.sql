-- Accounts, namespaces and credentials: the tenancy every other table hangs off.
-- Ids are text with a readable prefix (acct_, ns_, k_) so logs and support tickets
-- say what an id is; they are random, never sequential, so they leak no counts.

create table accounts (
  id           text primary key,
  email        text not null unique,
  display_name text,
  created_at   timestamptz not null default now()
);

create table namespaces (
  id          text primary key,
  account_id  text not null references accounts(id),
  name        text not null,
  created_at  timestamptz not null default now(),
  archived_at timestamptz
);
-- A name is unique among the account's live namespaces; archived ones free their name.
create unique index namespaces_live_name on namespaces (account_id, name) where archived_at is null;
create index namespaces_account on namespaces (account_id, created_at);

-- API keys. The token is brk_<id>.<secret>; only sha256(token) is stored.
-- namespace_id null = account-wide (operator-minted); otherwise namespace-baked.
create table api_keys (
  id           text primary key,
  account_id   text not null references accounts(id),
  namespace_id text references namespaces(id),
  display_name text not null,
  key_prefix   text not null,
  token_hash   bytea not null,
  scopes       text[] not null,
  expires_at   timestamptz,
  last_used_at timestamptz,
  revoked_at   timestamptz,
  created_at   timestamptz not null default now()
);
create index api_keys_namespace on api_keys (namespace_id, created_at);

-- Wallet: one per account, integer micro-USD. Kept when namespaces are archived.
create table wallets (
  account_id        text primary key references accounts(id),
  balance_micro_usd bigint not null default 0,
  updated_at        timestamptz not null default now()
);

-- Credit top-ups by the operator, an append-only audit of every balance change
-- that did not come from usage.
create table wallet_credits (
  id               bigint generated always as identity primary key,
  account_id       text not null references accounts(id),
  amount_micro_usd bigint not null,
  created_at       timestamptz not null default now()
);

-- OAuth clients and tokens (device flow). Namespace-bound: destroyed with the namespace.
create table oauth_clients (
  id                  text primary key,
  account_id          text not null references accounts(id),
  namespace_id        text not null references namespaces(id) on delete cascade,
  client_id           text not null unique,
  client_name         text not null,
  client_type         text not null,
  client_secret_hash  bytea,
  redirect_uris       text[] not null default '{}',
  allowed_scopes      text[] not null default '{}',
  allowed_grant_types text[] not null default '{}',
  created_at          timestamptz not null default now()
);

create table oauth_tokens (
  id                 text primary key,
  account_id         text not null references accounts(id),
  namespace_id       text not null references namespaces(id) on delete cascade,
  client_id          text not null,
  access_token_hash  bytea not null unique,
  refresh_token_hash bytea unique,
  scopes             text[] not null,
  expires_at         timestamptz not null,
  refresh_expires_at timestamptz,
  revoked_at         timestamptz,
  created_at         timestamptz not null default now()
);

-- Policies (budget, rate_limit, guardrail, preset) and their bindings to principals.
create table policies (
  id           text primary key,
  account_id   text not null references accounts(id),
  namespace_id text not null references namespaces(id) on delete cascade,
  name         text not null,
  kind         text not null check (kind in ('budget', 'rate_limit', 'guardrail', 'preset')),
  spec         jsonb not null default '{}',
  disabled_at  timestamptz,
  created_at   timestamptz not null default now()
);
create index policies_namespace on policies (namespace_id, created_at);

create table policy_bindings (
  id             text primary key,
  policy_id      text not null references policies(id) on delete cascade,
  principal_type text not null check (principal_type in ('namespace', 'api_key', 'oauth_token', 'oauth_client')),
  principal_id   text not null,
  created_at     timestamptz not null default now(),
  unique (policy_id, principal_type, principal_id)
);
create index policy_bindings_principal on policy_bindings (principal_type, principal_id);

-- BYOK provider keys: sealed boxes, keyed by account (kept when a namespace is archived).
create table byok_keys (
  account_id      text not null references accounts(id),
  provider_name   text not null,
  kek_id          text not null,
  ciphertext      bytea not null,
  key_prefix      text not null,
  api_base        text,
  last_used_at    timestamptz,
  last_failure_at timestamptz,
  last_failure_kind text,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  primary key (account_id, provider_name)
);
