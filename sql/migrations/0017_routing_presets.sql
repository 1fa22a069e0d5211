-- Routing presets ("virtual models"): a named routing choice a request selects with
-- `model: "@<name>"`. The spec columns are what the management API replaces as a whole;
-- the name is unique among a namespace's presets (a duplicate is a 409). Ids compare
-- byte by byte (collation C) like every other id column.
create table routing_presets (
  id            text collate "C" primary key,
  account_id    text collate "C" not null references accounts(id),
  namespace_id  text collate "C" not null references namespaces(id) on delete cascade,
  name          text not null,
  model         text,
  system_prompt text,
  params        jsonb not null default '{}',
  routing       jsonb not null default '{}',
  disabled_at   timestamptz,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create unique index routing_presets_namespace_name on routing_presets (namespace_id, name);
