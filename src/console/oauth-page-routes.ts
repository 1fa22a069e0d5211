import { Elysia } from "elysia";
import { badRequest } from "../errors/api-error";
import { CLIENT_GRANT_TYPES, validateCreate } from "../management/oauth-clients/oauth-client-body";
import * as clients from "../management/oauth-clients/oauth-client-service";
import { listGrants, revokeGrant } from "../identity/oauth-grant-service";
import { field, type ConsoleContext } from "./console-context";
import { checkedValues, idField, oneLineField, submittedValues, textAreaField } from "./form-input";
import { pageWithNotices, type FormState } from "./management-layout";
import { backTo, managementForm, refusableForm, type ManagementRequest } from "./management-request";
import { oauthPage, type NewClient } from "./oauth-page";

const NOTICES = {
  deleted: "Client deleted: every token issued to it is revoked.",
  revoked: "Grant revoked: its access and refresh tokens no longer work.",
};

/** /console/oauth: register (the secret shown once) and delete clients; list and revoke grants. */
export function oauthPageRoutes(context: ConsoleContext) {
  const { services } = context;
  const show = async (req: ManagementRequest, state: FormState, created?: NewClient) => {
    const [listed, grants] = await Promise.all([clients.listClients(services, req.tenant), listGrants(services, req.tenant)]);
    return oauthPage(req, listed.data, grants, state, created);
  };

  return new Elysia({ name: "console-oauth", normalize: false })
    .get("/console/oauth", pageWithNotices(context, NOTICES, show))
    .post("/console/oauth/clients", ({ request, body }) =>
      refusableForm(context, request, body, "oauth-client-create", {
        async act(req) {
          const clientType = field(body, "client_type");
          if (clientType !== "confidential" && clientType !== "public") throw badRequest("Choose a client type.");
          const redirectUris = textAreaField(body, "redirect_uris", "Redirect URIs", 20 * 2049)
            .split("\n")
            .map((line) => line.trim())
            .filter((line) => line !== "");
          if (redirectUris.length > 20) throw badRequest("Register at most 20 redirect URIs.");
          const grantTypes = checkedValues(body, "grant.", CLIENT_GRANT_TYPES);
          if (grantTypes.length === 0) throw badRequest("Choose at least one grant type.");
          // The JSON API's own shape checks, then its rules (and messages).
          const input = validateCreate({
            client_name: oneLineField(body, "client_name", "Name", { max: 200, required: true }),
            client_type: clientType,
            redirect_uris: redirectUris,
            allowed_grant_types: grantTypes,
          });
          const created = await clients.createClient(services, req.tenant, input);
          return show(req, { notice: "Client registered." }, created);
        },
        showAgain: (req, message, status) => show(req, { error: message, status, values: submittedValues(body) }),
      }),
    )
    .post("/console/oauth/clients/delete", ({ request, body }) =>
      managementForm(context, request, body, "oauth-client-delete", async (req) => {
        await clients.removeClient(services, req.tenant, idField(body, "OAuth client"));
        return backTo(req, "/console/oauth", "deleted");
      }),
    )
    .post("/console/oauth/grants/revoke", ({ request, body }) =>
      managementForm(context, request, body, "oauth-grant-revoke", async (req) => {
        await revokeGrant(services, req.tenant, idField(body, "OAuth token"));
        return backTo(req, "/console/oauth", "revoked");
      }),
    );
}
