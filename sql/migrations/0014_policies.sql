-- Policies and their bindings exist since 0001; the management API now writes them.
-- A policy records when it was last changed (name, spec, enabled state).
alter table policies add column updated_at timestamptz not null default now();
update policies set updated_at = created_at;

-- Listing a namespace's policies filtered by kind.
create index policies_namespace_kind on policies (namespace_id, kind, created_at);

-- The policy store looks up "every binding of these principals" on each cache miss: with
-- policy_id in the index, that lookup reads the index alone before joining the policies.
create index policy_bindings_principal_policy on policy_bindings (principal_type, principal_id, policy_id);
drop index policy_bindings_principal;
