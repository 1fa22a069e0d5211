import { notFound } from "../errors/api-error";

/**
 * The shapes the ids in management paths can have (newId in tokens.ts mints them:
 * a prefix, "_", base36; key ids come from the `brk_<id>.` part of a token, which is
 * `[A-Za-z0-9_-]`). `request_id` is a client-visible request id: a client's own
 * x-request-id (printable ASCII, ≤ 128 characters, see request-id.ts) or a UUID.
 */
const PATH_ID_SHAPES: Readonly<Record<string, { pattern: RegExp; what: string }>> = {
  nsid: { pattern: /^(me|ns_[A-Za-z0-9_-]{1,64})$/, what: "namespace" },
  id: { pattern: /^k_[A-Za-z0-9_-]{1,64}$/, what: "key" },
  account_id: { pattern: /^acct_[A-Za-z0-9_-]{1,64}$/, what: "account" },
  request_id: { pattern: /^[\x21-\x7e]{1,128}$/, what: "request" },
};

/**
 * Checked after authentication, before anything reaches SQL: an id that cannot exist
 * (a NUL, a stray byte, a wrong prefix, 10 kB of text) is the same 404 as a missing
 * one, instead of a query PostgreSQL refuses ("invalid byte sequence") or a pointless
 * index lookup. Elysia hands over percent-decoded values; a malformed escape arrives
 * as null, which the routes already answer (400 or 404) without a query.
 */
export function assertAddressablePathIds(params: Record<string, unknown> | undefined): void {
  if (!params) return;
  for (const [name, value] of Object.entries(params)) {
    const shape = PATH_ID_SHAPES[name];
    if (shape && typeof value === "string" && !shape.pattern.test(value)) throw notFound(shape.what);
  }
}
