-- Policies (budget, rate_limit, guardrail, preset) of a namespace and their bindings to
-- principals. Every statement names the account and, where the caller acts inside one,
-- the namespace: another tenant's policy is the same empty result as a missing one.
-- Bindings carry no tenant ids of their own; they are reached through their policy.

-- name: insertPolicy
insert into policies (id, account_id, namespace_id, name, kind, spec)
values ($1, $2, $3, $4, $5, $6::text::jsonb)
returning id, name, kind, spec, disabled_at, created_at, updated_at;

-- name: listPolicies
-- $3 null = every kind.
select id, name, kind, spec, disabled_at, created_at, updated_at
  from policies
 where namespace_id = $1 and account_id = $2 and ($3::text is null or kind = $3::text)
 order by created_at, id;

-- name: findPolicy
select id, name, kind, spec, disabled_at, created_at, updated_at
  from policies
 where id = $1 and namespace_id = $2 and account_id = $3;

-- name: findPolicyForUpdate
-- Read-modify-write of a spec (a preset's partial PUT) holds the row until it commits.
select id, name, kind, spec, disabled_at, created_at, updated_at
  from policies
 where id = $1 and namespace_id = $2 and account_id = $3
   for update;

-- name: updatePolicy
-- $4 name and $5 spec: null = unchanged.
update policies
   set name = coalesce($4::text, name),
       spec = coalesce($5::text::jsonb, spec),
       updated_at = now()
 where id = $1 and namespace_id = $2 and account_id = $3
returning id, name, kind, spec, disabled_at, created_at, updated_at;

-- name: setPolicyDisabled
-- Idempotent: disabling keeps the first disabled_at; updated_at moves only on a change.
update policies
   set disabled_at = case when $4::boolean then coalesce(disabled_at, now()) else null end,
       updated_at = case when (disabled_at is not null) = $4::boolean then updated_at else now() end
 where id = $1 and namespace_id = $2 and account_id = $3
returning id;

-- name: deletePolicy
-- Bindings go with the policy (policy_bindings.policy_id is on delete cascade).
delete from policies
 where id = $1 and namespace_id = $2 and account_id = $3
returning id;

-- name: insertBinding
-- Binding a principal the policy already has is not an error: nothing is inserted and
-- findBinding answers with the existing row.
insert into policy_bindings (id, policy_id, principal_type, principal_id)
select $1, p.id, $3, $4
  from policies p
 where p.id = $2 and p.namespace_id = $5 and p.account_id = $6
on conflict (policy_id, principal_type, principal_id) do nothing
returning id;

-- name: findBinding
select b.id
  from policy_bindings b
  join policies p on p.id = b.policy_id
 where b.policy_id = $1 and b.principal_type = $2 and b.principal_id = $3
   and p.namespace_id = $4 and p.account_id = $5;

-- name: deleteBinding
delete from policy_bindings b
 using policies p
 where b.id = $1 and b.policy_id = $2
   and p.id = b.policy_id and p.namespace_id = $3 and p.account_id = $4
returning b.principal_type, b.principal_id;

-- name: listBindings
select b.id, b.policy_id, b.principal_type, b.principal_id, b.created_at
  from policy_bindings b
  join policies p on p.id = b.policy_id
 where b.policy_id = $1 and p.namespace_id = $2 and p.account_id = $3
 order by b.created_at, b.id;

-- name: listNamespaceBindings
-- Every binding of the namespace's policies (the console lists them under each policy).
select b.id, b.policy_id, b.principal_type, b.principal_id, b.created_at
  from policy_bindings b
  join policies p on p.id = b.policy_id
 where p.namespace_id = $1 and p.account_id = $2
 order by b.created_at, b.id;

-- name: listPrincipalPolicies
-- The namespace's policies bound directly to one principal, disabled ones included.
select p.id, p.name, p.kind, p.spec, p.disabled_at, p.created_at, p.updated_at
  from policy_bindings b
  join policies p on p.id = b.policy_id
 where b.principal_type = $1 and b.principal_id = $2
   and p.namespace_id = $3 and p.account_id = $4
 order by p.created_at, p.id;

-- name: findBoundPolicies
-- The policy store's cache fill: every policy of the account bound to any of the given
-- principals (parallel arrays of types and ids), disabled ones included so the store
-- knows which cached principals a later enable touches.
select b.principal_type, b.principal_id, p.id, p.name, p.kind, p.spec, p.disabled_at
  from unnest($1::text[], $2::text[]) as wanted(principal_type, principal_id)
  join policy_bindings b on b.principal_type = wanted.principal_type and b.principal_id = wanted.principal_id
  join policies p on p.id = b.policy_id
 where p.account_id = $3
 order by p.created_at, p.id;

-- name: findKeyPrincipal
-- An API key as a binding target: the account's key, with the namespace it is baked into
-- (null for an account-wide key).
select id, namespace_id from api_keys where id = $1 and account_id = $2;

-- name: budgetCounterStatus
-- What admission reads of budget counters $1 (each one policy's budget as bound to one
-- principal; keys built by policyCounterKey), in the order given: the holds of requests
-- in flight, and the spend of the window ($2 seconds: the spend buckets ending inside
-- it, as admission_admit_batch sums them; 0: the `total` counter). The keys belong to
-- policy $3, which must be the tenant's ($4 namespace, $5 account): no row otherwise.
-- A key no request has reached yet has no counter row: nothing reserved, nothing spent.
select k.counter_key,
       coalesce(c.reserved_micro_usd, 0)::bigint as reserved_micro_usd,
       (case when $2::int > 0
             then coalesce((select sum(s.spent_micro_usd) from budget_spend s
                             where s.counter_key = k.counter_key collate "C"
                               and s.bucket_end > clock_timestamp() - make_interval(secs => $2::int)), 0)
             else coalesce(c.spent_micro_usd, 0) end)::bigint as spent_micro_usd
  from unnest($1::text[]) with ordinality as k(counter_key, ordinal)
  left join admission_counters c on c.counter_key = k.counter_key collate "C"
 where exists (select 1 from policies p where p.id = $3 and p.namespace_id = $4 and p.account_id = $5)
 order by k.ordinal;

-- name: rateLimitCounterStatus
-- What admission counts of rate-limit counters $1 (in the order given) over the window
-- of $2 seconds: the admissions still inside it (admission prunes those at or before
-- now - window), their tokens, and the whole seconds until the oldest of them leaves
-- (null: none inside). Tenant check as budgetCounterStatus ($3 policy, $4 namespace, $5 account).
select k.counter_key,
       count(a.grant_id)::bigint as used_requests,
       coalesce(sum(a.tokens), 0)::bigint as used_tokens,
       ceil(extract(epoch from (min(a.admitted_at) + make_interval(secs => $2::int) - clock_timestamp())))::int as resets_in_secs
  from unnest($1::text[]) with ordinality as k(counter_key, ordinal)
  left join rate_limit_admissions a
    on a.counter_key = k.counter_key collate "C" and a.admitted_at > clock_timestamp() - make_interval(secs => $2::int)
 where exists (select 1 from policies p where p.id = $3 and p.namespace_id = $4 and p.account_id = $5)
 group by k.counter_key, k.ordinal
 order by k.ordinal;
