import { notFound } from "../errors/api-error";

/**
 * The shapes the ids in management paths can have (newId in src/ids.ts mints them:
 * a prefix, "_", base36; key ids come from the `brk_<id>.` part of a token, which is
 * `[A-Za-z0-9_-]`). `request_id` is a client-visible request id: a client's own
 * x-request-id (printable ASCII, ≤ 128 characters, see request-id.ts) or a UUID.
 */
interface IdShape {
  pattern: RegExp;
  /** The resource the 404 names, as the route names it for a missing one. */
  what: string;
}

/** Any id this service mints or accepts from another service: no NUL, no stray bytes. */
const ANY_ID = /^[A-Za-z0-9_-]{1,128}$/;
const POLICY_ID = /^pol_[A-Za-z0-9_-]{1,64}$/;

const NAMED_PARAMS: Readonly<Record<string, IdShape>> = {
  nsid: { pattern: /^(me|ns_[A-Za-z0-9_-]{1,64})$/, what: "namespace" },
  account_id: { pattern: /^acct_[A-Za-z0-9_-]{1,64}$/, what: "account" },
  request_id: { pattern: /^[\x21-\x7e]{1,128}$/, what: "request" },
  binding_id: { pattern: /^pb_[A-Za-z0-9_-]{1,64}$/, what: "binding" },
  principal_id: { pattern: ANY_ID, what: "principal" },
};

/**
 * A bare `:id` is the id of the collection named just before it in the route
 * (`…/keys/:id` is a key, `…/budgets/:id` a budget): its shape and the 404's wording
 * come from that collection, so a malformed id answers exactly like a missing one.
 */
const COLLECTION_IDS: Readonly<Record<string, IdShape>> = {
  keys: { pattern: /^k_[A-Za-z0-9_-]{1,64}$/, what: "key" },
  policies: { pattern: POLICY_ID, what: "policy" },
  budgets: { pattern: POLICY_ID, what: "budget" },
  presets: { pattern: POLICY_ID, what: "preset" },
  "routing-presets": { pattern: /^rp_[A-Za-z0-9_-]{1,64}$/, what: "routing preset" },
  // A client by its row id (a UUID) or its public client id.
  clients: { pattern: /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|brc_[A-Za-z0-9_-]{1,64})$/, what: "OAuth client" },
  tokens: { pattern: /^og_[A-Za-z0-9_-]{1,64}$/, what: "OAuth token" },
};
const ANY_COLLECTION: IdShape = { pattern: ANY_ID, what: "resource" };

function collectionOf(route: string | undefined): string | undefined {
  if (!route) return undefined;
  const at = route.lastIndexOf("/:id");
  if (at <= 0) return undefined;
  return route.slice(route.lastIndexOf("/", at - 1) + 1, at);
}

/**
 * Checked after authentication, before anything reaches SQL: an id that cannot exist
 * (a NUL, a stray byte, a wrong prefix, 10 kB of text) is the same 404 as a missing
 * one, instead of a query PostgreSQL refuses ("invalid byte sequence") or a pointless
 * index lookup. Elysia hands over percent-decoded values; a malformed escape arrives
 * as null, which the routes already answer (400 or 404) without a query. `route` is
 * the matched route pattern (Elysia's `context.route`).
 */
export function assertAddressablePathIds(params: Record<string, unknown> | undefined, route?: string): void {
  if (!params) return;
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== "string") continue;
    const collection = name === "id" ? collectionOf(route) : undefined;
    const shape = name === "id" ? (collection !== undefined ? (COLLECTION_IDS[collection] ?? ANY_COLLECTION) : ANY_COLLECTION) : NAMED_PARAMS[name];
    if (shape && !shape.pattern.test(value)) throw notFound(shape.what);
  }
}

/** For ids that arrive outside the path (a query parameter naming a principal). */
export function assertAddressableId(value: string, what: string): void {
  if (!ANY_ID.test(value)) throw notFound(what);
}
