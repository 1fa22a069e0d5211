import { Elysia } from "elysia";
import { badRequest } from "../errors/api-error";
import { createKey, listAccountKeys, listKeys, revokeAccountKey, revokeKey } from "../identity/api-key-service";
import { createNamespace } from "../management/namespaces/namespace-service";
import { listPolicies, namespaceBindings, policyStatus } from "../management/policies/policy-service";
import { dailyUsage } from "../management/usage/usage-service";
import { budgetFloor } from "./budget-floor";
import type { ConsoleContext } from "./console-context";
import { checkedValues, endOfDayField, idField, oneLineField, submittedValues } from "./form-input";
import { noticeOf, type FormState } from "./management-layout";
import { backTo, managementForm, managementPage, refusableForm, type ManagementRequest, type QueryFields } from "./management-request";
import { keysPage, NAMESPACE_KEY_SCOPES, type KeyPolicy, type NewKey } from "./keys-page";

const NOTICES = {
  revoked: "The key is revoked: requests with it are refused from now on.",
  created: "Key created.",
  namespace: "Namespace created: this is its page of keys.",
};

/** The session's one-time message after "Create key": the token, shown on the next page only. */
function newKeyOf(flash: unknown): NewKey | undefined {
  if (typeof flash !== "object" || flash === null) return undefined;
  const { kind, token, display_name, key_prefix } = flash as Record<string, unknown>;
  return kind === "new-key" && typeof token === "string" && typeof display_name === "string" && typeof key_prefix === "string" ? { token, display_name, key_prefix } : undefined;
}

/** /console/keys: create a namespace; list (a table, filtered by name or prefix, 50 a page), create (the token shown once), revoke. */
export function keysPageRoutes(context: ConsoleContext) {
  const { services } = context;
  /**
   * The keys, and for each the policies that bind it (its own and its namespace's) with
   * their current figures: one status read per bound policy, whatever the number of keys.
   */
  const show = async (req: ManagementRequest, state: FormState, created?: NewKey, query: QueryFields = {}) => {
    const scope = { caller: req.caller, ...req.tenant };
    const now = new Date();
    const month = { from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)), to: now };
    const [keys, accountKeys, policies, bindings, spendByDay] = await Promise.all([
      listKeys(services, req.tenant),
      listAccountKeys(services, req.caller),
      listPolicies(services, scope, null),
      namespaceBindings(services, scope),
      dailyUsage(services, req.tenant, month, "api_key"),
    ]);
    // `GET …/usage/daily?group_by=api_key` over this month, summed per key.
    const monthSpend = new Map<string, number>();
    for (const row of spendByDay.data) if (row.group !== null) monthSpend.set(row.group, (monthSpend.get(row.group) ?? 0) + row.spend_micro_usd);
    const relevant = bindings.filter((binding) => binding.principalType === "api_key" || binding.principalType === "namespace");
    const bound = policies.filter((policy) => relevant.some((binding) => binding.policyId === policy.id));
    const statuses = new Map(await Promise.all(bound.map(async (policy) => [policy.id, await policyStatus(services, scope, policy.id)] as const)));
    const policiesOf = (key: { id: string }): KeyPolicy[] =>
      relevant
        .filter((binding) => binding.principalType === "namespace" || binding.principalId === key.id)
        .flatMap((binding) => {
          const policy = bound.find((row) => row.id === binding.policyId);
          return policy ? [{ policy, boundTo: binding.principalType === "namespace" ? ("namespace" as const) : ("key" as const), status: statuses.get(policy.id)! }] : [];
        });
    const filter = (query.q ?? "").trim().slice(0, 200);
    const page = /^\d{1,6}$/.test(query.page ?? "") ? Number(query.page) : 1;
    return keysPage(req, keys, accountKeys, { policiesOf, monthSpend, floor: budgetFloor(services.catalog), filter, page }, state, created);
  };

  return new Elysia({ name: "console-keys", normalize: false })
    // Only the page a creation redirects to (`done=created`) reads the session's message,
    // so other views of the page cost no write.
    .get("/console/keys", ({ request, query }: { request: Request; query: QueryFields }) =>
      managementPage(context, request, query, async (req) => {
        const created = query.done === "created" ? newKeyOf(await context.sessions.takeFlash(req.session)) : undefined;
        return show(req, noticeOf(query, NOTICES), created, query);
      }),
    )
    .post("/console/keys", ({ request, body }) =>
      refusableForm(context, request, body, "keys-create", {
        async act(req) {
          const displayName = oneLineField(body, "display_name", "Name", { max: 200, required: true });
          const scopes = checkedValues(body, "scope.", NAMESPACE_KEY_SCOPES);
          if (scopes.length === 0) throw badRequest("Choose at least one scope.");
          const expiresAt = endOfDayField(body, "expires_on", "The expiry date");
          const created = await createKey(services, req.caller, req.namespace.id, { display_name: displayName, scopes, ...(expiresAt ? { expires_at: expiresAt } : {}) });
          // Post/redirect/get: the token waits in the session, sealed, for the one page
          // load after the redirect; reloading that page shows no token and mints nothing.
          await context.sessions.putFlash(req.session, { kind: "new-key", token: created.token, display_name: created.key.displayName, key_prefix: created.key.keyPrefix });
          return backTo(req, "/console/keys", "created");
        },
        showAgain: (req, message, status) => show(req, { error: message, status, values: submittedValues(body) }),
      }),
    )
    // A namespace made by the signed-in person (account-wide, as POST /v1/namespaces with
    // the account's session): post/redirect/get to the new namespace's keys page.
    .post("/console/namespaces", ({ request, body }) =>
      refusableForm(context, request, body, "namespaces-create", {
        async act(req) {
          const name = oneLineField(body, "name", "The namespace name", { max: 100, required: true });
          const created = await createNamespace(services, req.caller, name);
          return backTo({ ...req, namespace: created }, "/console/keys", "namespace");
        },
        showAgain: (req, message, status) => show(req, { error: message, status, values: submittedValues(body) }),
      }),
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
