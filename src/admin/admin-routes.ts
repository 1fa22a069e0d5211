import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { bodyValidator } from "../management/validate-body";
import { constantTimeEqual, markNoStore, sha256 } from "../auth/tokens";
import { extractCredential } from "../auth/extract-credential";
import { assertAddressablePathIds } from "../auth/path-ids";
import { unauthorized } from "../errors/api-error";
import type { Services } from "../services";
import { addCredits, createAccount, setPassword } from "./admin-service";
import { resealKeys } from "../byok/reseal-keys";

const MAX_MICRO_USD = 1_000_000_000_000_000; // $1 billion: far past any real top-up, far below 2^53

const validateAccount = bodyValidator(
  Type.Object(
    {
      email: Type.String({ maxLength: 320, pattern: "^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$" }),
      credit_micro_usd: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_MICRO_USD })),
      password: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
);
const validatePassword = bodyValidator(Type.Object({ password: Type.String() }, { additionalProperties: false }));
const validateCredit = bodyValidator(
  Type.Object({ amount_micro_usd: Type.Integer({ minimum: 1, maximum: MAX_MICRO_USD }) }, { additionalProperties: false }),
);

/**
 * The operator API (docs/api/operator.md "Operator API and CLI"). Mounted only when ADMIN_TOKEN is set;
 * otherwise /admin/* answers 404 like any unknown path.
 */
export function adminRoutes(services: Services) {
  const adminToken = services.config.adminToken;
  if (!adminToken) return new Elysia({ name: "admin", normalize: false });
  // During a rotation the outgoing token (ADMIN_TOKEN_PREVIOUS) is accepted too, so
  // instances can be restarted with the new one one at a time (docs/operations.md "Rotating ADMIN_TOKEN and BYOK_MASTER_KEY without downtime").
  const accepted = [adminToken, services.config.adminTokenPrevious].filter((token) => token !== undefined).map(sha256);
  return new Elysia({ name: "admin", normalize: false })
    .onBeforeHandle(({ request, path, params }) => {
      if (!path.startsWith("/admin")) return;
      const presented = extractCredential(request.headers);
      // Hash both sides so the comparison is constant-time whatever the lengths.
      const hashed = presented && sha256(presented);
      // Every accepted token is compared, so the time taken says nothing about which matched.
      const matches = hashed ? accepted.map((token) => constantTimeEqual(hashed, token)) : [];
      if (!matches.includes(true)) throw unauthorized("invalid operator token");
      assertAddressablePathIds(params);
    })
    .post(
      "/admin/accounts",
      async ({ body, set }) => {
        const input = validateAccount(body);
        const created = await createAccount(services, input.email, input.credit_micro_usd ?? 0, input.password);
        markNoStore(set);
        return created;
      },
      {
        detail: {
          summary: "Operator: create an account, its first namespace and an account-wide key; with `password`, the account can sign in to the console",
          tags: ["admin"],
          ...validateAccount.doc,
        },
      },
    )
    .put(
      "/admin/accounts/:account_id/password",
      ({ body, params }) => setPassword(services, params.account_id, validatePassword(body).password),
      { detail: { summary: "Operator: set or replace an account's console password", tags: ["admin"], ...validatePassword.doc } },
    )
    .post(
      "/admin/accounts/:account_id/credits",
      ({ body, params }) => addCredits(services, params.account_id, validateCredit(body).amount_micro_usd),
      { detail: { summary: "Operator: add credit to an account's wallet", tags: ["admin"], ...validateCredit.doc } },
    )
    .post("/admin/byok/rotate-kek", () => services.keks.rotate(), {
      detail: { summary: "Operator: make a new current BYOK key-encryption key (older ones still open what they sealed)", tags: ["admin"] },
    })
    .post("/admin/byok/reseal", () => resealKeys(services.db.sql, services.keks), {
      detail: { summary: "Operator: re-seal every stored BYOK key under the current KEK, so older KEKs can be retired", tags: ["admin"] },
    });
}
