import { Elysia } from "elysia";
import { badRequest } from "../errors/api-error";
import { deleteByokKey, listByokKeys, upsertByokKey } from "../management/byok/byok-key-service";
import { field, type ConsoleContext } from "./console-context";
import { oneLineField, submittedValues } from "./form-input";
import { pageWithNotices, type FormState } from "./management-layout";
import { backTo, managementForm, refusableForm, type ManagementRequest } from "./management-request";
import { BYOK_SCRIPT_PATH, byokPage } from "./byok-page";
import { byokSealScript } from "./byok-seal-asset";

const NOTICES = { saved: "Key saved. Requests to that provider now use it.", deleted: "Key deleted." };
const YEAR_SECS = 365 * 24 * 60 * 60;

/** /console/byok: the account's provider keys; set one (sealed in the page), delete one; and the sealing script. */
export function byokPageRoutes(context: ConsoleContext) {
  const { services } = context;
  const providers = () => services.catalog.listProviders().filter((provider) => provider.byok);
  // A person signed in to the console acts as the account itself: account-wide keys.
  const callerOf = (req: ManagementRequest) => ({ accountId: req.session.accountId, namespaceId: null });
  const show = async (req: ManagementRequest, state: FormState) => {
    const [keys, script] = await Promise.all([listByokKeys(services, callerOf(req)), byokSealScript()]);
    return byokPage(req, keys, providers(), script.version, state);
  };

  return new Elysia({ name: "console-byok", normalize: false })
    .get("/console/byok", pageWithNotices(context, NOTICES, show))
    .post("/console/byok", ({ request, body }) =>
      refusableForm(context, request, body, "byok-set", {
        async act(req) {
          const ciphertext = field(body, "ciphertext_b64");
          if (ciphertext === "") throw badRequest("The key was not sealed, so nothing was saved: this form needs JavaScript in the page to seal the key before it is sent.");
          if (ciphertext.length > 16_384) throw badRequest("The sealed key is too long.");
          const apiBase = oneLineField(body, "api_base", "API base URL", { max: 2048 });
          await upsertByokKey(services, callerOf(req), {
            provider_name: oneLineField(body, "provider_name", "Provider", { max: 128, required: true }),
            kek_id: oneLineField(body, "kek_id", "The key-encryption key id", { max: 128, required: true }),
            ciphertext_b64: ciphertext,
            key_prefix: oneLineField(body, "key_prefix", "The key prefix", { max: 32 }),
            ...(apiBase === "" ? {} : { api_base: apiBase }),
          });
          return backTo(req, "/console/byok", "saved");
        },
        // What was typed comes back, never the box (the key field itself was never sent).
        showAgain: (req, message, status) => show(req, { error: message, status, values: submittedValues(body, ["ciphertext_b64", "kek_id", "key_prefix"]) }),
      }),
    )
    .post("/console/byok/delete", ({ request, body }) =>
      managementForm(context, request, body, "byok-delete", async (req) => {
        const namespaceId = field(body, "namespace_id");
        await deleteByokKey(services, callerOf(req), field(body, "provider"), namespaceId === "" ? undefined : namespaceId);
        return backTo(req, "/console/byok", "deleted");
      }),
    )
    .get(BYOK_SCRIPT_PATH, async () => {
      const script = await byokSealScript();
      return new Response(script.code, {
        headers: {
          "content-type": "text/javascript; charset=utf-8",
          // The page names it with its version: a new build is a new address.
          "cache-control": `public, max-age=${YEAR_SECS}, immutable`,
          "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
          "x-content-type-options": "nosniff",
        },
      });
    });
}
