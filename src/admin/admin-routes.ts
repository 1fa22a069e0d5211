import { Elysia, t } from "elysia";
import { constantTimeEqual, sha256 } from "../auth/tokens";
import { extractCredential } from "../auth/extract-credential";
import { ApiError, unauthorized } from "../errors/api-error";
import type { Services } from "../services";
import { addCredits, createAccount } from "./admin-service";

const MAX_MICRO_USD = 1_000_000_000_000_000; // $1 billion: far past any real top-up, far below 2^53

/**
 * The operator API (DESIGN.md "Contracts"). Mounted only when ADMIN_TOKEN is set;
 * otherwise /admin/* answers 404 like any unknown path.
 */
export function adminRoutes(services: Services) {
  const adminToken = services.config.adminToken;
  if (!adminToken) return new Elysia({ name: "admin", normalize: false });
  const expected = sha256(adminToken);
  return new Elysia({ name: "admin", normalize: false })
    .onBeforeHandle(({ request, path }) => {
      if (!path.startsWith("/admin")) return;
      const presented = extractCredential(request.headers);
      // Hash both sides so the comparison is constant-time whatever the lengths.
      if (!presented || !constantTimeEqual(sha256(presented), expected)) throw unauthorized("invalid operator token");
    })
    .post("/admin/accounts", ({ body }) => createAccount(services.db.sql, body.email, body.credit_micro_usd ?? 0), {
      body: t.Object(
        {
          email: t.String({ format: "email", maxLength: 320 }),
          credit_micro_usd: t.Optional(t.Integer({ minimum: 0, maximum: MAX_MICRO_USD })),
        },
        { additionalProperties: false },
      ),
      detail: { summary: "Operator: create an account, its first namespace and an account-wide key", tags: ["admin"] },
    })
    .post(
      "/admin/accounts/:account_id/credits",
      ({ body, params }) => {
        if (body.amount_micro_usd === 0) throw new ApiError("bad_request", "amount_micro_usd must not be zero");
        return addCredits(services.db.sql, params.account_id, body.amount_micro_usd);
      },
      {
        body: t.Object({ amount_micro_usd: t.Integer({ minimum: 1, maximum: MAX_MICRO_USD }) }, { additionalProperties: false }),
        detail: { summary: "Operator: add credit to an account's wallet", tags: ["admin"] },
      },
    );
}
