import { Elysia } from "elysia";
import { badRequest } from "../errors/api-error";
import { createKey, listKeys, revokeKey } from "../management/keys/key-service";
import type { ConsoleContext } from "./console-context";
import { checkedValues, endOfDayField, idField, oneLineField, submittedValues } from "./form-input";
import { pageWithNotices, type FormState } from "./management-layout";
import { backTo, managementForm, orShowRefusal, type ManagementRequest } from "./management-request";
import { keysPage, NAMESPACE_KEY_SCOPES, type NewKey } from "./keys-page";

const NOTICES = { revoked: "The key is revoked: requests with it are refused from now on." };

/** /console/keys: list, create (the token shown once), revoke. */
export function keysPageRoutes(context: ConsoleContext) {
  const { services } = context;
  const show = async (req: ManagementRequest, state: FormState, created?: NewKey) => keysPage(req, await listKeys(services, req.tenant), state, created);

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
    );
}
