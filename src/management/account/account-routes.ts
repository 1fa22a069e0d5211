import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { authPlugin } from "../../auth/auth-plugin";
import type { Principal } from "../../auth/principal";
import { ApiError } from "../../errors/api-error";
import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { bodyValidator } from "../validate-body";
import { readAccount, removeAccount, updateAccount } from "./account-service";

const validatePatch = bodyValidator(
  Type.Object(
    { display_name: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 100, pattern: "^\\S(.*\\S)?$" }), Type.Null()])) },
    { additionalProperties: false },
  ),
);

/**
 * `user:write` is control-plane: no namespace-bound credential carries it (scopes.ts), so
 * the scope check alone already keeps them out. This says so in the refusal should a
 * bound credential ever hold it.
 */
function requireAccountWide(principal: Principal): void {
  if (principal.namespaceId !== null) throw new ApiError("permission_denied", "a namespace-bound credential cannot change the account");
}

const routeDoc = routeDocs<"user:read" | "user:write">("account");

/** The caller's own account (user-level, docs/api/identity.md "Accounts"): read, rename, delete. */
export function accountRoutes(services: Services) {
  return new Elysia({ name: "account", normalize: false })
    .use(authPlugin(services))
    .get("/v1/account", ({ principal }) => readAccount(services, principal.accountId), routeDoc("user:read", "The caller's account: id, email, display name, creation time"))
    .patch(
      "/v1/account",
      ({ principal, body }) => {
        requireAccountWide(principal);
        return updateAccount(services, principal.accountId, validatePatch(body).display_name);
      },
      routeDoc("user:write", "Set or clear the account's display name", validatePatch.doc),
    )
    .delete(
      "/v1/account",
      ({ principal }) => {
        requireAccountWide(principal);
        return removeAccount(services, principal.accountId);
      },
      routeDoc("user:write", "Delete the account: every key, OAuth grant, BYOK key and console session destroyed, every namespace archived, the email freed"),
    );
}
