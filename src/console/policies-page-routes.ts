import { Elysia } from "elysia";
import { badRequest } from "../errors/api-error";
import * as policies from "../management/policies/policy-service";
import { BudgetSpecSchema, checkShape, validatePolicySpec } from "../policy/policy-spec";
import { field, type ConsoleContext } from "./console-context";
import { idField, oneLineField, submittedValues } from "./form-input";
import { noticeOf, type FormState } from "./management-layout";
import { backTo, managementForm, managementPage, orShowRefusal, type ManagementRequest, type QueryFields } from "./management-request";
import { parseUsdToMicro } from "./parse-usd";
import { policiesPage, type PolicyForm } from "./policies-page";

const NOTICES = {
  budget: "Budget created.",
  rate_limit: "Rate limit created.",
  disabled: "Policy disabled: it no longer applies.",
  enabled: "Policy enabled.",
  deleted: "Policy deleted.",
};

/** A count typed into a form: empty is none; anything else a positive whole number. */
function optionalCount(body: unknown, name: string, label: string): number | null {
  const text = field(body, name).trim().replace(/[,_\s]/g, "");
  if (text === "") return null;
  if (!/^\d{1,16}$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) throw badRequest(`${label} must be a whole number of at least 1.`);
  return Number(text);
}

/** /console/policies: the namespace's policies; budgets entered in USD, rate limits; disable, enable, delete. */
export function policiesPageRoutes(context: ConsoleContext) {
  const deps: policies.PolicyDeps = { sql: context.services.db.sql, store: context.services.policies };
  const scopeOf = (req: ManagementRequest): policies.PolicyScope => ({ caller: req.caller, accountId: req.session.accountId, namespaceId: req.namespace.id });
  const show = async (req: ManagementRequest, state: FormState, form?: PolicyForm) => policiesPage(req, await policies.listPolicyRows(deps, scopeOf(req), null), state, form);

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
      await policies.setDisabled(deps, scopeOf(req), idField(body, "policy"), disabled);
      return backTo(req, "/console/policies", disabled ? "disabled" : "enabled");
    });

  return new Elysia({ name: "console-policies", normalize: false })
    .get("/console/policies", ({ request, query }) => managementPage(context, request, query as QueryFields, (req) => show(req, noticeOf(query as QueryFields, NOTICES))))
    .post(
      "/console/policies/budget",
      createForm("policies-budget", "budget", async (body, req) => {
        const name = oneLineField(body, "name", "Name", { max: 200, required: true });
        const limitMicroUsd = parseUsdToMicro(field(body, "limit_usd"), "The limit");
        const spec = checkShape(BudgetSpecSchema, { window: field(body, "window"), limit_micro_usd: limitMicroUsd }, "");
        await policies.createPolicy(deps, scopeOf(req), { name, kind: "budget", spec });
      }),
    )
    .post(
      "/console/policies/rate-limit",
      createForm("policies-rate-limit", "rate_limit", async (body, req) => {
        const name = oneLineField(body, "name", "Name", { max: 200, required: true });
        const windowSecs = optionalCount(body, "window_secs", "The window");
        if (windowSecs === null) throw badRequest("The window is required.");
        const maxRequests = optionalCount(body, "max_requests", "Most requests");
        const maxTokens = optionalCount(body, "max_tokens", "Most tokens");
        if (maxRequests === null && maxTokens === null) throw badRequest("Fill in most requests, most tokens or both: a rate limit without a cap limits nothing.");
        const spec = validatePolicySpec("rate_limit", { window_secs: windowSecs, max_requests: maxRequests, max_tokens: maxTokens });
        await policies.createPolicy(deps, scopeOf(req), { name, kind: "rate_limit", spec });
      }),
    )
    .post("/console/policies/disable", toggle("policies-disable", true))
    .post("/console/policies/enable", toggle("policies-enable", false))
    .post("/console/policies/delete", ({ request, body }) =>
      managementForm(context, request, body, "policies-delete", async (req) => {
        await policies.removePolicy(deps, scopeOf(req), idField(body, "policy"));
        return backTo(req, "/console/policies", "deleted");
      }),
    );
}
