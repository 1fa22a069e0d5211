import { Elysia } from "elysia";
import { badRequest } from "../errors/api-error";
import { createKey, listAccountKeys, listKeys, revokeAccountKey, revokeKey } from "../management/keys/key-service";
import { listPolicyRows, namespaceBindings, policyStatus } from "../management/policies/policy-service";
import type { ConsoleContext } from "./console-context";
import { checkedValues, endOfDayField, idField, oneLineField, submittedValues } from "./form-input";
import { pageWithNotices, type FormState } from "./management-layout";
import { backTo, managementForm, orShowRefusal, type ManagementRequest } from "./management-request";
import { keysPage, NAMESPACE_KEY_SCOPES, type KeyPolicy, type NewKey } from "./keys-page";

const NOTICES = { revoked: "The key is revoked: requests with it are refused from now on." };

/** /console/keys: list, create (the token shown once), revoke. */
export function keysPageRoutes(context: ConsoleContext) {
  const { services } = context;
  /**
   * The keys, and for each the policies that bind it (its own and its namespace's) with
   * their current figures: one status read per bound policy, whatever the number of keys.
   */
  const show = async (req: ManagementRequest, state: FormState, created?: NewKey) => {
    const scope = { caller: req.caller, ...req.tenant };
    const [keys, accountKeys, policies, bindings] = await Promise.all([
      listKeys(services, req.tenant),
      listAccountKeys(services, req.caller),
      listPolicyRows(services, scope, null),
      namespaceBindings(services, scope),
    ]);
    const relevant = bindings.filter((binding) => binding.principal_type === "api_key" || binding.principal_type === "namespace");
    const bound = policies.filter((policy) => relevant.some((binding) => binding.policy_id === policy.id));
    const statuses = new Map(await Promise.all(bound.map(async (policy) => [policy.id, await policyStatus(services, scope, policy.id)] as const)));
    const policiesOf = (key: { id: string }): KeyPolicy[] =>
      relevant
        .filter((binding) => binding.principal_type === "namespace" || binding.principal_id === key.id)
        .flatMap((binding) => {
          const policy = bound.find((row) => row.id === binding.policy_id);
          return policy ? [{ policy, boundTo: binding.principal_type === "namespace" ? ("namespace" as const) : ("key" as const), status: statuses.get(policy.id)! }] : [];
        });
    return keysPage(req, keys, accountKeys, policiesOf, state, created);
  };

  return new Elysia({ name: "console-keys", normalize: false })
    .get("/console/keys", pageWithNotices(context, NOTICES, show))
    .post("/console/keys", ({ request, body }) =>
      managementForm(context, request, body, "keys-create", (req) =>
        orShowRefusal(
          async () => {
            const displayName = oneLineField(body, "display_name", "Name", { max: 200, required: true });
            const scopes = checkedValues(body, "scope.", NAMESPACE_KEY_SCOPES);
            if (scopes.length === 0) throw badRequest("Choose at least one scope.");
            const expiresAt = endOfDayField(body, "expires_on", "The expiry date");
            const created = await createKey(services, req.caller, req.namespace.id, { display_name: displayName, scopes, ...(expiresAt ? { expires_at: expiresAt } : {}) });
            return show(req, { notice: "Key created." }, created);
          },
          (message, status) => show(req, { error: message, status, values: submittedValues(body) }),
        ),
      ),
    )
    .post("/console/keys/revoke", ({ request, body }) =>
      managementForm(context, request, body, "keys-revoke", async (req) => {
        await revokeKey(services, req.tenant, idField(body, "key"));
        return backTo(req, "/console/keys", "revoked");
      }),
    )
    .post("/console/keys/revoke-account", ({ request, body }) =>
      managementForm(context, request, body, "keys-revoke-account", async (req) => {
        await revokeAccountKey(services, req.caller, idField(body, "key"));
        return backTo(req, "/console/keys", "revoked");
      }),
    );
}
