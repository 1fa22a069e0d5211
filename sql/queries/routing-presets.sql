-- Routing presets of a namespace. Every statement names the namespace and the account:
-- another tenant's preset is the same empty result as a missing one.

-- name: insertRoutingPreset
insert into routing_presets (id, account_id, namespace_id, name, model, system_prompt, params, routing)
values ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8::text::jsonb)
returning id, name, model, system_prompt, params, routing, disabled_at;

-- name: listRoutingPresets
select id, name, model, system_prompt, params, routing, disabled_at
  from routing_presets
 where namespace_id = $1 and account_id = $2
 order by created_at, id;

-- name: findRoutingPreset
select id, name, model, system_prompt, params, routing, disabled_at
  from routing_presets
 where id = $1 and namespace_id = $2 and account_id = $3;

-- name: findRoutingPresetByName
-- The inference path's lookup; disabled rows are returned too (the caller refuses them).
select id, name, model, system_prompt, params, routing, disabled_at
  from routing_presets
 where namespace_id = $1 and name = $2;

-- name: replaceRoutingPreset
-- The whole spec is replaced; $4 name null = unchanged.
update routing_presets
   set name = coalesce($4::text, name),
       model = $5,
       system_prompt = $6,
       params = $7::text::jsonb,
       routing = $8::text::jsonb,
       updated_at = now()
 where id = $1 and namespace_id = $2 and account_id = $3
returning id, name, model, system_prompt, params, routing, disabled_at;

-- name: setRoutingPresetDisabled
-- Idempotent: disabling keeps the first disabled_at.
update routing_presets
   set disabled_at = case when $4::boolean then coalesce(disabled_at, now()) else null end,
       updated_at = case when (disabled_at is not null) = $4::boolean then updated_at else now() end
 where id = $1 and namespace_id = $2 and account_id = $3
returning id, name, model, system_prompt, params, routing, disabled_at;

-- name: deleteRoutingPreset
delete from routing_presets
 where id = $1 and namespace_id = $2 and account_id = $3
returning id, name;
