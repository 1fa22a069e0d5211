import { Elysia } from "elysia";
import { listNamespaceKeys, revokeNamespaceKey } from "../db/queries/api-keys";
import { badRequest, notFound } from "../errors/api-error";
import { createKey } from "../management/keys/key-service";
import type { ConsoleContext } from "./console-context";
import { checkedValues, endOfDayField, idField, oneLineField, submittedValues } from "./form-input";
import { noticeOf, type FormState } from "./management-layout";
import { backTo, managementForm, managementPage, orShowRefusal, type ManagementRequest, type QueryFields } from "./management-request";
import { keysPage, NAMESPACE_KEY_SCOPES, type NewKey } from "./keys-page";

const NOTICES = { revoked: "The key is revoked: requests with it are refused from now on." };

/** /console/keys: list, create (the token shown once), revoke. */
export function keysPageRoutes(context: ConsoleContext) {
  const sql = context.services.db.sql;
  const show = async (req: ManagementRequest, state: FormState, created?: NewKey) =>
    keysPage(req, await listNamespaceKeys(sql, req.namespace.id, req.session.accountId), state, created);

  return new Elysia({ name: "console-keys", normalize: false })
    .get("/console/keys", ({ request, query }) => managementPage(context, request, query as QueryFields, (req) => show(req, noticeOf(query as QueryFields, NOTICES))))
    .post("/console/keys", ({ request, body }) =>
      managementForm(context, request, body, "keys-create", (req) =>
        orShowRefusal(
          async () => {
            const displayName = oneLineField(body, "display_name", "Name", { max: 200, required: true });
            const scopes = checkedValues(body, "scope.", NAMESPACE_KEY_SCOPES);
            if (scopes.length === 0) throw badRequest("Choose at least one scope.");
            const expiresAt = endOfDayField(body, "expires_on", "The expiry date");
            const created = await createKey(sql, req.caller, req.namespace.id, { display_name: displayName, scopes, ...(expiresAt ? { expires_at: expiresAt } : {}) });
            return show(req, { notice: "Key created." }, created);
          },
          (message, status) => show(req, { error: message, status, values: submittedValues(body) }),
        ),
      ),
    )
    .post("/console/keys/revoke", ({ request, body }) =>
      managementForm(context, request, body, "keys-revoke", async (req) => {
        const id = idField(body, "key");
        if (!(await revokeNamespaceKey(sql, id, req.namespace.id, req.session.accountId))) throw notFound("key");
        context.services.credentials.invalidate(id);
        return backTo(req, "/console/keys", "revoked");
      }),
    );
}
