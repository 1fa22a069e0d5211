-- Budget and rate-limit counters held exactly across instances (src/admission/README.md).
--
-- Every admission, settlement, release and sweep of a counter key first locks its
-- admission_counters row (keys in byte order, one transaction), then reads and writes
-- the rows below for that key. The row is the serialisation point: no check-then-
-- increment race between instances, no per-process counter.

create table admission_counters (
  counter_key        text collate "C" primary key,
  -- Budgets: the sum of the live holds of this key (requests in flight).
  reserved_micro_usd bigint not null default 0,
  -- Budgets: every charge ever settled against this key (the `total` window).
  spent_micro_usd    bigint not null default 0,
  -- Rate limits: the admissions of this key not yet pruned, and their tokens.
  window_requests    bigint not null default 0,
  window_tokens      bigint not null default 0
);

-- A budget reservation of one request in flight. Renewed by its instance while the
-- request runs; an expired hold (its instance died) is swept as spent at its amount.
create table admission_holds (
  grant_id         text collate "C" not null,
  counter_key      text collate "C" not null,
  amount_micro_usd bigint not null,
  started_at       timestamptz not null,
  -- The width of the spend bucket the settled charge lands in (by the budget's window).
  bucket_secs      integer not null,
  expires_at       timestamptz not null,
  primary key (grant_id, counter_key)
);
create index admission_holds_expires on admission_holds (expires_at);

-- Settled budget spend per key in time buckets: a window's spend is the sum of the
-- buckets that end inside it. bucket_end is stored, so buckets of any width add up.
create table budget_spend (
  counter_key     text collate "C" not null,
  bucket_end      timestamptz not null,
  spent_micro_usd bigint not null,
  primary key (counter_key, bucket_end)
);

-- One row per request a rate limit admitted, pruned once it leaves the key's window.
create table rate_limit_admissions (
  counter_key text collate "C" not null,
  admitted_at timestamptz not null,
  grant_id    text collate "C" not null,
  tokens      bigint not null,
  primary key (counter_key, admitted_at, grant_id)
);
create index rate_limit_admissions_grant on rate_limit_admissions (grant_id);
