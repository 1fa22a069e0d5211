import { Elysia } from "elysia";
import { assertAddressableId } from "../auth/path-ids";
import { badRequest } from "../errors/api-error";
import * as policies from "../management/policies/policy-service";
import { parsePrincipalType } from "../identity/principal-target";
import type { PrincipalRef } from "../policy/effective-policy";
import { BudgetSpecSchema, checkShape, validatePolicySpec, type BudgetSpec, type PolicySpec, type PresetSpec } from "../policy/policy-spec";
import { budgetFloor } from "./budget-floor";
import { field, type ConsoleContext } from "./console-context";
import { idField, oneLineField, optionalCountField, submittedValues } from "./form-input";
import { guardrailFromForm } from "./guardrail-form-input";
import { pageWithNotices, type FormState } from "./management-layout";
import { backTo, managementForm, refusableForm, type ManagementRequest } from "./management-request";
import { loadNamespacePrincipals } from "./namespace-principals";
import { parseUsdToMicro } from "./parse-usd";
import { policiesPage, type PolicyForm } from "./policies-page";

const NOTICES = {
  budget: "Budget created.",
  rate_limit: "Rate limit created.",
  guardrail: "Guardrail created. Bind it below to make it apply.",
  bound: "Policy bound: it applies to that principal's requests from now on.",
  unbound: "Binding removed.",
  disabled: "Policy disabled: it no longer applies.",
  enabled: "Policy enabled.",
  budget_changed: "Budget changed: admission uses the new limit from the next request.",
  rate_limit_changed: "Rate limit changed: admission uses the new limits from the next request.",
  preset_budget_changed: "The preset's budget changed: admission uses the new limit from the next request.",
  deleted: "Policy deleted.",
};

/**
 * The principal the bind form's `<select>` names, `type:id`. A value that is no principal
 * type is a 400; an id that cannot be one of ours is the 404 of a missing principal, as
 * is any id the namespace may not name (checked by the policy service).
 */
function principalField(body: unknown): PrincipalRef {
  const value = field(body, "principal");
  const at = value.indexOf(":");
  if (value === "" || at < 0) throw badRequest("Choose what to bind the policy to.");
  const type = parsePrincipalType(value.slice(0, at), "principal");
  const id = value.slice(at + 1);
  assertAddressableId(id, "principal");
  return { type, id };
}

/** A budget's window and limit as typed (dollars, parsed exactly), as the create and change forms send them. */
function budgetSpecOf(body: unknown): BudgetSpec {
  const limitMicroUsd = parseUsdToMicro(field(body, "limit_usd"), "The limit");
  return checkShape(BudgetSpecSchema, { window: field(body, "window"), limit_micro_usd: limitMicroUsd }, "");
}

/** A rate limit's window and caps as typed: at least one cap, as the API requires of this form. */
function rateLimitSpecOf(body: unknown): PolicySpec {
  const windowSecs = optionalCountField(body, "window_secs", "The window");
  if (windowSecs === null) throw badRequest("The window is required.");
  const maxRequests = optionalCountField(body, "max_requests", "Most requests");
  const maxTokens = optionalCountField(body, "max_tokens", "Most tokens");
  if (maxRequests === null && maxTokens === null) throw badRequest("Fill in most requests, most tokens or both: a rate limit without a cap limits nothing.");
  return validatePolicySpec("rate_limit", { window_secs: windowSecs, max_requests: maxRequests, max_tokens: maxTokens });
}

/**
 * /console/policies: the namespace's policies; budgets entered in USD, rate limits and
 * guardrails; disable, enable, delete; bind to and unbind from the namespace's principals.
 */
export function policiesPageRoutes(context: ConsoleContext) {
  const { services } = context;
  const scopeOf = (req: ManagementRequest): policies.PolicyScope => ({ caller: req.caller, ...req.tenant });
  const show = async (req: ManagementRequest, state: FormState, form?: PolicyForm) => {
    const scope = scopeOf(req);
    const [rows, bindings, principals] = await Promise.all([
      policies.listPolicies(services, scope, null),
      policies.namespaceBindings(services, scope),
      loadNamespacePrincipals(services, req.namespace, req.tenant),
    ]);
    const measured = rows.filter((row) => row.disabledAt === null && (row.kind === "budget" || row.kind === "rate_limit" || row.kind === "preset"));
    const statuses = new Map(await Promise.all(measured.map(async (row) => [row.id, await policies.policyStatus(services, scope, row.id)] as const)));
    return policiesPage(req, { policies: rows, bindings, principals, statuses, floor: budgetFloor(services.catalog) }, state, form);
  };

  /** A create form: its refusals are shown in that form, with what was typed. */
  const createForm = (purpose: string, form: PolicyForm, create: (body: unknown, req: ManagementRequest) => Promise<void>) =>
    ({ request, body }: { request: Request; body: unknown }) =>
      refusableForm(context, request, body, purpose, {
        async act(req) {
          await create(body, req);
          return backTo(req, "/console/policies", form);
        },
        showAgain: (req, message, status) => show(req, { error: message, status, values: submittedValues(body) }, form),
      });

  /**
   * A change form under a policy: the API's update service (PUT …/budgets/{id}, PUT
   * …/policies/{id}), typed to the kind, so an id of another kind, namespace or account is
   * the 404 page of a missing one; a refused value is shown at the top of the page.
   */
  const editForm = (purpose: string, kind: "budget" | "rate_limit", specOf: (body: unknown) => PolicySpec) =>
    ({ request, body }: { request: Request; body: unknown }) =>
      refusableForm(context, request, body, purpose, {
        async act(req) {
          const id = idField(body, "policy");
          const spec = specOf(body);
          await policies.updatePolicy(services, scopeOf(req), id, kind, () => ({ spec }));
          return backTo(req, "/console/policies", `${kind}_changed`);
        },
        showAgain: (req, message, status) => show(req, { error: message, status }),
      });

  /**
   * A policy preset's budget clause, changed or added, through the same update service
   * typed to presets (another kind's id, or another namespace's preset, is the 404 page).
   * The new spec is the stored one with that clause replaced, read under the row's lock, so
   * a rate limit or guardrail changed meanwhile through the API is kept. A refused value is
   * shown in the preset's form, open, with what was typed.
   */
  const editPresetBudget = ({ request, body }: { request: Request; body: unknown }) =>
    refusableForm(context, request, body, "policies-edit-preset-budget", {
      async act(req) {
        const id = idField(body, "policy");
        const budget = budgetSpecOf(body);
        await policies.updatePolicy(services, scopeOf(req), id, "preset", (current) => ({
          spec: validatePolicySpec("preset", { ...(current.spec as PresetSpec), budget }),
        }));
        return backTo(req, "/console/policies", "preset_budget_changed");
      },
      showAgain: (req, message, status) => show(req, { error: message, status, values: submittedValues(body) }, "preset_budget"),
    });

  const toggle = (purpose: string, disabled: boolean) => ({ request, body }: { request: Request; body: unknown }) =>
    managementForm(context, request, body, purpose, async (req) => {
      await policies.setDisabled(services, scopeOf(req), idField(body, "policy"), disabled);
      return backTo(req, "/console/policies", disabled ? "disabled" : "enabled");
    });

  return new Elysia({ name: "console-policies", normalize: false })
    .get("/console/policies", pageWithNotices(context, NOTICES, show))
    .post(
      "/console/policies/budget",
      createForm("policies-budget", "budget", async (body, req) => {
        const name = oneLineField(body, "name", "Name", { max: 200, required: true });
        await policies.createPolicy(services, scopeOf(req), { name, kind: "budget", spec: budgetSpecOf(body) });
      }),
    )
    .post(
      "/console/policies/rate-limit",
      createForm("policies-rate-limit", "rate_limit", async (body, req) => {
        const name = oneLineField(body, "name", "Name", { max: 200, required: true });
        await policies.createPolicy(services, scopeOf(req), { name, kind: "rate_limit", spec: rateLimitSpecOf(body) });
      }),
    )
    .post("/console/policies/edit-budget", editForm("policies-edit-budget", "budget", budgetSpecOf))
    .post("/console/policies/edit-rate-limit", editForm("policies-edit-rate-limit", "rate_limit", rateLimitSpecOf))
    .post("/console/policies/edit-preset-budget", editPresetBudget)
    .post(
      "/console/policies/guardrail",
      createForm("policies-guardrail", "guardrail", async (body, req) => {
        const { name, spec } = guardrailFromForm(body);
        await policies.createPolicy(services, scopeOf(req), { name, kind: "guardrail", spec });
      }),
    )
    .post("/console/policies/bind", ({ request, body }) =>
      refusableForm(context, request, body, "policies-bind", {
        async act(req) {
          await policies.bind(services, scopeOf(req), idField(body, "policy"), principalField(body));
          return backTo(req, "/console/policies", "bound");
        },
        showAgain: (req, message, status) => show(req, { error: message, status }),
      }),
    )
    .post("/console/policies/unbind", ({ request, body }) =>
      managementForm(context, request, body, "policies-unbind", async (req) => {
        const bindingId = field(body, "binding");
        assertAddressableId(bindingId, "binding");
        await policies.unbind(services, scopeOf(req), idField(body, "policy"), bindingId);
        return backTo(req, "/console/policies", "unbound");
      }),
    )
    .post("/console/policies/disable", toggle("policies-disable", true))
    .post("/console/policies/enable", toggle("policies-enable", false))
    .post("/console/policies/delete", ({ request, body }) =>
      managementForm(context, request, body, "policies-delete", async (req) => {
        await policies.removePolicy(services, scopeOf(req), idField(body, "policy"));
        return backTo(req, "/console/policies", "deleted");
      }),
    );
}
