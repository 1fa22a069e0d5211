import { Elysia } from "elysia";
import { assertAddressableId } from "../auth/path-ids";
import { badRequest } from "../errors/api-error";
import * as policies from "../management/policies/policy-service";
import { parsePrincipalType } from "../management/policies/principal-target";
import type { PrincipalRef } from "../policy/effective-policy";
import { BudgetSpecSchema, checkShape, validatePolicySpec } from "../policy/policy-spec";
import { field, type ConsoleContext } from "./console-context";
import { idField, oneLineField, optionalCountField, submittedValues } from "./form-input";
import { guardrailFromForm } from "./guardrail-form-input";
import { pageWithNotices, type FormState } from "./management-layout";
import { backTo, managementForm, orShowRefusal, type ManagementRequest } from "./management-request";
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
      policies.listPolicyRows(services, scope, null),
      policies.namespaceBindings(services, scope),
      loadNamespacePrincipals(services, req.namespace, req.tenant),
    ]);
    const measured = rows.filter((row) => row.disabled_at === null && (row.kind === "budget" || row.kind === "rate_limit" || row.kind === "preset"));
    const statuses = new Map(await Promise.all(measured.map(async (row) => [row.id, await policies.policyStatus(services, scope, row.id)] as const)));
    return policiesPage(req, { policies: rows, bindings, principals, statuses }, state, form);
  };

  /** A create form: its refusals are shown in that form, with what was typed. */
  const createForm = (purpose: string, form: PolicyForm, create: (body: unknown, req: ManagementRequest) => Promise<void>) =>
    ({ request, body }: { request: Request; body: unknown }) =>
      managementForm(context, request, body, purpose, (req) =>
        orShowRefusal(
          async () => {
            await create(body, req);
            return backTo(req, "/console/policies", form);
          },
          (message, status) => show(req, { error: message, status, values: submittedValues(body) }, form),
        ),
      );

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
        const limitMicroUsd = parseUsdToMicro(field(body, "limit_usd"), "The limit");
        const spec = checkShape(BudgetSpecSchema, { window: field(body, "window"), limit_micro_usd: limitMicroUsd }, "");
        await policies.createPolicy(services, scopeOf(req), { name, kind: "budget", spec });
      }),
    )
    .post(
      "/console/policies/rate-limit",
      createForm("policies-rate-limit", "rate_limit", async (body, req) => {
        const name = oneLineField(body, "name", "Name", { max: 200, required: true });
        const windowSecs = optionalCountField(body, "window_secs", "The window");
        if (windowSecs === null) throw badRequest("The window is required.");
        const maxRequests = optionalCountField(body, "max_requests", "Most requests");
        const maxTokens = optionalCountField(body, "max_tokens", "Most tokens");
        if (maxRequests === null && maxTokens === null) throw badRequest("Fill in most requests, most tokens or both: a rate limit without a cap limits nothing.");
        const spec = validatePolicySpec("rate_limit", { window_secs: windowSecs, max_requests: maxRequests, max_tokens: maxTokens });
        await policies.createPolicy(services, scopeOf(req), { name, kind: "rate_limit", spec });
      }),
    )
    .post(
      "/console/policies/guardrail",
      createForm("policies-guardrail", "guardrail", async (body, req) => {
        const { name, spec } = guardrailFromForm(body);
        await policies.createPolicy(services, scopeOf(req), { name, kind: "guardrail", spec });
      }),
    )
    .post("/console/policies/bind", ({ request, body }) =>
      managementForm(context, request, body, "policies-bind", (req) =>
        orShowRefusal(
          async () => {
            await policies.bind(services, scopeOf(req), idField(body, "policy"), principalField(body));
            return backTo(req, "/console/policies", "bound");
          },
          (message, status) => show(req, { error: message, status }),
        ),
      ),
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
