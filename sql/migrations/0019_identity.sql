-- Identity: account passwords and console sessions, the OAuth authorization server's
-- grants, device codes and authorization codes, and sign-in throttling.
--
-- Every secret (access and refresh tokens, device codes, authorization codes, session
-- tokens, client secrets) is stored as its SHA-256 only, like API keys. User codes are
-- short and human-typed, so they are stored in clear, live at most ten minutes, and
-- guessing them is throttled (auth_throttle).

-- Accounts: an optional argon2id password (Bun.password's PHC string) and a tombstone.
-- A deleted account keeps its row (usage history points at it) but its email is freed.
alter table accounts
  add column password_hash text,
  add column deleted_at    timestamptz;

-- OAuth grants. One row per grant (per approval), not per token: refreshing rotates the
-- access and refresh token hashes in place, so the grant's id is stable. That id is the
-- `oauth_token` principal policies bind to and `GET …/oauth/tokens` lists.
-- client_id is the public client id (`switchyard-cli` or `brc_…`); oauth_client_ref is
-- the oauth_clients row id of a registered client (null for the built-in one), which is
-- the `oauth_client` principal.
alter table oauth_tokens
  add column oauth_client_ref  text,
  add column last_used_at      timestamptz;
-- expires_at (0001) is the current access token's expiry, refresh_expires_at the refresh
-- token's; both move forward on every refresh.
create index oauth_tokens_namespace on oauth_tokens (namespace_id, created_at) where revoked_at is null;
create index oauth_tokens_account on oauth_tokens (account_id) where revoked_at is null;

-- Refresh tokens a grant has rotated out. Presenting one again means it leaked (or a
-- client replayed it): the whole grant is revoked (RFC 6819 §5.2.2.3).
create table oauth_rotated_refresh_tokens (
  token_hash bytea primary key,
  grant_id   text collate "C" not null references oauth_tokens(id) on delete cascade,
  rotated_at timestamptz not null default now()
);

-- RFC 8628 device authorizations. status: pending → approved | denied → consumed.
-- interval_secs grows by 5 on every `slow_down`. account_id/namespace_id/scopes are set
-- by the approval; grant_id when the device exchanged it for tokens.
create table oauth_device_codes (
  device_code_hash bytea primary key,
  user_code        text not null,
  client_id        text collate "C" not null,
  oauth_client_ref text,
  requested_scopes text[] not null,
  status           text not null default 'pending' check (status in ('pending', 'approved', 'denied', 'consumed')),
  interval_secs    integer not null,
  last_polled_at   timestamptz,
  account_id       text collate "C" references accounts(id),
  namespace_id     text collate "C" references namespaces(id) on delete cascade,
  scopes           text[],
  grant_id         text collate "C",
  expires_at       timestamptz not null,
  created_at       timestamptz not null default now()
);
-- A user code is unique among the live ones; expired rows are swept.
create unique index oauth_device_codes_user_code on oauth_device_codes (user_code);
create index oauth_device_codes_expiry on oauth_device_codes (expires_at);

-- Authorization codes (RFC 6749 §4.1 with PKCE, RFC 7636). Single use: consumed_at is
-- set by the exchange; a second exchange revokes the grant the first one made.
create table oauth_authorization_codes (
  code_hash        bytea primary key,
  client_id        text collate "C" not null,
  oauth_client_ref text,
  account_id       text collate "C" not null references accounts(id),
  namespace_id     text collate "C" not null references namespaces(id) on delete cascade,
  redirect_uri     text not null,
  scopes           text[] not null,
  code_challenge   text,
  consumed_at      timestamptz,
  grant_id         text collate "C",
  expires_at       timestamptz not null,
  created_at       timestamptz not null default now()
);
create index oauth_authorization_codes_expiry on oauth_authorization_codes (expires_at);

-- Console sessions: the cookie carries a random token, the row its SHA-256. csrf_secret
-- is per session; forms carry a token derived from it.
create table console_sessions (
  token_hash   bytea primary key,
  account_id   text collate "C" not null references accounts(id),
  csrf_secret  bytea not null,
  expires_at   timestamptz not null,
  created_at   timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
create index console_sessions_account on console_sessions (account_id);

-- Failed attempts, counted in the database so every instance sees the same count:
-- sign-in per account and per client address, user-code guesses per address.
-- key is e.g. 'sign-in:account:<id>', 'sign-in:address:<ip>', 'user-code:address:<ip>'.
create table auth_throttle (
  key          text primary key,
  failures     integer not null,
  window_start timestamptz not null,
  locked_until timestamptz
);
