-- Metering: request records, their usage frames, billing audit and the wallet ledger.
-- All money is integer micro-USD. Rows are written in batches by src/metering/write-buffer.ts;
-- every insert is idempotent on the Switchyard-generated record id (never on the
-- client-chosen request id, which a client could reuse to dodge a charge).

-- Money reserved by admitted, unsettled requests. available = balance - reserved.
alter table wallets add column reserved_micro_usd bigint not null default 0;

create table requests (
  id                     text primary key,
  request_id             text not null,
  account_id             text not null references accounts(id),
  -- Kept when the namespace is archived: history is detached, not deleted.
  namespace_id           text,
  api_key_id             text,
  status                 text not null,
  status_code            integer not null,
  billing_status         text not null,
  model_id               text,
  provider_id            text,
  provider_model_id      text,
  routing_profile        text,
  funding_source         text,
  streamed               boolean not null,
  finish_reason          text,
  first_token_kind       text,
  prompt_tokens          integer not null default 0,
  completion_tokens      integer not null default 0,
  reasoning_tokens       integer not null default 0,
  cache_read_tokens      integer not null default 0,
  cache_write_tokens     integer not null default 0,
  final_charge_micro_usd bigint,
  request_duration_ms    integer,
  upstream_duration_ms   integer,
  generation_duration_ms integer,
  ttft_ms                integer,
  used_capabilities      text[] not null default '{}',
  usage_evidence         jsonb not null,
  warnings               jsonb not null default '[]',
  created_at             timestamptz not null,
  completed_at           timestamptz not null
);
create index requests_namespace_created on requests (namespace_id, created_at desc, id desc);
create index requests_account_created on requests (account_id, created_at desc);
create index requests_account_request_id on requests (account_id, request_id, created_at desc);
-- Public statistics scan succeeded requests by day.
create index requests_created_succeeded on requests (created_at) where status = 'succeeded';

-- One row per usage report of every attempt, failed fallbacks included.
create table usage_frames (
  request_record_id text not null,
  attempt_ordinal   integer not null,
  frame_ordinal     integer not null,
  account_id        text not null,
  account_label     text not null,
  frame_kind        text not null,
  provider_id       text not null,
  provider_model_id text not null,
  usage             jsonb not null,
  created_at        timestamptz not null default now(),
  primary key (request_record_id, attempt_ordinal, frame_ordinal)
);

-- Immutable record of each computed charge and what it was computed from.
create table billing_audit (
  request_record_id text primary key,
  account_id        text not null,
  namespace_id      text,
  charge_micro_usd  bigint not null,
  pricing           jsonb not null,
  buckets           jsonb not null,
  created_at        timestamptz not null default now()
);
create index billing_audit_namespace_created on billing_audit (namespace_id, created_at);

-- The wallet ledger: signed amounts (credit > 0, debit < 0).
create table ledger_entries (
  id                text primary key,
  account_id        text not null references accounts(id),
  namespace_id      text,
  request_record_id text,
  kind              text not null check (kind in ('usage', 'pending_debit_recovery', 'credit', 'refund')),
  amount_micro_usd  bigint not null,
  -- The reservation this entry releases (usage entries only).
  released_micro_usd bigint not null default 0,
  created_at        timestamptz not null default now(),
  unique (request_record_id, kind)
);
create index ledger_entries_account_created on ledger_entries (account_id, created_at desc);
