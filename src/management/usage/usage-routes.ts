import { Elysia } from "elysia";
import { authenticate, authPlugin, requireScope } from "../../auth/auth-plugin";
import { badRequest } from "../../errors/api-error";
import type { Services } from "../../services";
import { assertAddressablePathIds } from "../../auth/path-ids";
import { resolveTenant, type Tenant } from "../../identity/tenant";
import { MAX_DAILY_WINDOW_DAYS, MAX_HISTORY_OFFSET, parseDailyWindow, parseGroupBy, parseHistoryPage, parseWindow, type QueryParams } from "./query-params";
import { parseRequestFilters } from "./request-filters";
import { accountUsageAggregate, dailyUsage, findSettlementReceipt, listRequests, namespaceUsageAggregate, requestDetail } from "./usage-service";

/** An OpenAPI 3 parameter object, narrowed to what these routes document. */
export interface ParameterDoc {
  name: string;
  in: "query" | "path";
  required: boolean;
  schema: { type: "integer" | "string"; format?: string; default?: number; minimum?: number; maximum?: number };
  description: string;
}

/**
 * The paging of a newest-first listing (the request history, the billing transactions), as
 * OpenAPI query parameters: limit, a bounded offset, and the keyset cursor `after`, whose
 * value is an item of the listing (`item`: "record", "entry").
 */
export function cursorPaginationParameters(item: string, scope: string): ParameterDoc[] {
  return [
    { name: "limit", in: "query", required: false, schema: { type: "integer", default: 25, minimum: 1, maximum: 100 }, description: "clamped to [1, 100]" },
    {
      name: "offset",
      in: "query",
      required: false,
      schema: { type: "integer", default: 0, minimum: 0, maximum: MAX_HISTORY_OFFSET },
      description: `into the newest-first listing (counted from \`after\` when given); above ${MAX_HISTORY_OFFSET} → 400: page with \`after\` instead`,
    },
    {
      name: "after",
      in: "query",
      required: false,
      schema: { type: "string" },
      description: `a${item === "entry" ? "n" : ""} ${item} id: the page starts just after that ${item}, newest first (pass the previous page's \`next_after\`); the same cost at any depth. Not a${item === "entry" ? "n" : ""} ${item} of ${scope} (missing, or another namespace's or tenant's) → the same 400`,
    },
  ];
}

/** The same in words, for routes whose path parameters replace `parameters` (see WINDOW_DESCRIPTION). */
export function cursorPaginationDescription(item: string, scope: string, itemsType: string): string {
  return `Query: limit (integer, default 25, clamped to [1, 100]; not an integer → 400), offset (integer 0 to ${MAX_HISTORY_OFFSET}, default 0; above ${MAX_HISTORY_OFFSET} → 400 naming \`after\`), after (a${item === "entry" ? "n" : ""} ${item} id: the page starts just after that ${item}; pass the previous page's \`next_after\` to read the next page at any depth, with the same filters; an id that is not a${item === "entry" ? "n" : ""} ${item} of ${scope}, missing or another namespace's or tenant's, → the same 400). Response: { data: ${itemsType}[], limit, offset, next_after } — next_after is the id of the page's last ${item} when more follow, null at the end.`;
}

const HISTORY_PAGINATION_PARAMETERS = cursorPaginationParameters("record", "this namespace");
const HISTORY_PAGINATION_DESCRIPTION = cursorPaginationDescription("record", "this namespace", "RequestRecord");

const WINDOW_PARAMETERS: ParameterDoc[] = [
  { name: "from", in: "query", required: false, schema: { type: "string", format: "date-time" }, description: "inclusive; default: 30 days before `to`" },
  { name: "to", in: "query", required: false, schema: { type: "string", format: "date-time" }, description: "exclusive; default: now" },
];

/**
 * The OpenAPI plugin replaces a route's `parameters` with its path parameters when it
 * has any, so query parameters are listed only on routes without path parameters and
 * described in `description` everywhere.
 */
const WINDOW_DESCRIPTION = "Query: from (RFC 3339, inclusive; default 30 days before `to`), to (RFC 3339, exclusive; default now); unparsable or from ≥ to → 400.";

const FILTER_DESCRIPTION =
  "Filters, AND-combined, each optional: status, model_id, api_key_id, streamed (true|false), from (RFC 3339, inclusive), to (RFC 3339, exclusive). An unknown value matches nothing; a malformed one (empty, streamed not true|false, an unparsable date, from ≥ to) → 400 naming it.";

const NAMESPACE_USAGE_DETAIL = {
  summary: "Usage of the namespace over [from, to): requests, tokens, spend (billing-audit charges first), capability counts, billing anomalies",
  tags: ["usage"],
  "x-scope": "usage:read",
  description: WINDOW_DESCRIPTION,
};

const REQUEST_DETAIL = {
  summary: "One request record of the namespace by its id (rq_…): the history's fields, every warning, and every attempt (provider, model, funding, outcome, status, error kind, duration, time to first token)",
  tags: ["usage"],
  "x-scope": "usage:read",
  description:
    "{nsid} is a namespace id or `me`; {id} is the record's `id` as the history lists it. Response: RequestRecord & { warnings: [{code, field?, message}], attempts: [{ordinal, provider_id, model_id, funding_source, outcome, status_code, error, duration_ms, ttft_ms}] | null (null on records written before attempts were kept) }. Another namespace's record is the 404 of a missing one.",
};

const DAILY_USAGE_DETAIL = {
  summary: "Usage of the namespace by UTC day over [from, to), optionally split by model, API key or provider; days without requests omitted",
  tags: ["usage"],
  "x-scope": "usage:read",
  description: `${WINDOW_DESCRIPTION} At most ${MAX_DAILY_WINDOW_DAYS} days apart, else 400. group_by: model | api_key | provider (absent: one row per day, group null; anything else → 400). Response: { from, to, group_by, data: [{ date (YYYY-MM-DD, UTC), group, request_count, prompt_tokens, completion_tokens, spend_micro_usd }] }; the sums over data equal GET …/usage for the same window.`,
};

/**
 * Request history and usage:
 *   GET /v1/namespaces/{nsid}/requests, flat /v1/requests (= `me`)   request records, newest first
 *   GET /v1/namespaces/{nsid}/requests/{id}                           one record, its warnings and attempts
 *   GET /v1/namespaces/{nsid}/usage                                   namespace usage aggregate
 *   GET /v1/namespaces/{nsid}/usage/daily                             the same by UTC day (and model, key or provider)
 *   GET /v1/usage                                                     account usage aggregate (NOT the flat
 *                                                                     form of the namespace one)
 *   GET /v1/requests/{request_id}/settlement                          settlement receipt
 * All need usage:read. The history and the usage aggregates read the read pool and count
 * against the account's concurrent reads (ACCOUNT_CONCURRENT_READS, 429 past it), after
 * the credential and the query are checked, so a refused or malformed call takes no slot.
 * One record and the settlement receipt are single index lookups and take none.
 */
export function usageRoutes(services: Services) {
  const routes = new Elysia({ name: "usage", normalize: false }).use(authPlugin(services));

  /**
   * For {nsid} routes, in the same order as every other management route: 401 without
   * a valid credential, 403 for a missing scope, then 404 for any namespace the
   * credential cannot address (the same 404 as a missing one).
   */
  const authorizeNamespace = async (request: Request, nsid: string, scope: string): Promise<Tenant> => {
    const principal = await authenticate(services, request.headers);
    requireScope(principal, scope);
    assertAddressablePathIds({ nsid });
    return resolveTenant(services, principal, nsid);
  };

  /**
   * An {nsid} read of the history or usage: the credential first, then the query
   * (`parse` throws its 400), and only then one of the account's concurrent reads.
   */
  const readNamespace = async <Parsed, Answer>(request: Request, nsid: string, parse: () => Parsed, read: (tenant: Tenant, parsed: Parsed) => Promise<Answer>): Promise<Answer> => {
    const tenant = await authorizeNamespace(request, nsid, "usage:read");
    const parsed = parse();
    return services.accountReads.run(tenant.accountId, () => read(tenant, parsed));
  };

  for (const path of ["/v1/namespaces/:nsid/requests", "/v1/requests"] as const) {
    const namespaced = path.includes(":nsid");
    // Built apart from the route: OpenAPI extensions ("x-scope") are not in Elysia's detail type.
    const detail = {
      summary: namespaced
        ? "Request history of the namespace, newest first (metadata only, never prompts or responses)"
        : "Request history of the caller's own namespace (`me`), newest first",
      tags: ["usage"],
      "x-scope": "usage:read",
      description: `${namespaced ? "{nsid} is a namespace id or `me`. " : ""}${HISTORY_PAGINATION_DESCRIPTION} ${FILTER_DESCRIPTION}`,
      ...(namespaced ? {} : { parameters: HISTORY_PAGINATION_PARAMETERS }),
    };
    routes.get(
      path,
      async ({ request, params, query }) => {
        const nsid = (params as Record<string, string | undefined> | undefined)?.nsid ?? "me";
        return readNamespace(
          request,
          nsid,
          () => ({ page: parseHistoryPage(query as QueryParams), filters: parseRequestFilters(query as QueryParams) }),
          (tenant, { page, filters }) => listRequests(services, tenant, page, filters),
        );
      },
      { detail },
    );
  }

  return routes
    .get(
      "/v1/namespaces/:nsid/requests/:id",
      async ({ request, params }) => {
        const tenant = await authorizeNamespace(request, params.nsid, "usage:read");
        // Elysia percent-decodes the segment; a malformed escape arrives as null.
        const id: unknown = params.id;
        if (typeof id !== "string" || id.length === 0) throw badRequest("id must be a percent-encoded path segment");
        return requestDetail(services, tenant, id);
      },
      { detail: REQUEST_DETAIL },
    )
    .get(
      "/v1/namespaces/:nsid/usage",
      ({ request, params, query }) =>
        readNamespace(request, params.nsid, () => parseWindow(query as QueryParams), (tenant, window) => namespaceUsageAggregate(services, tenant, window)),
      { detail: NAMESPACE_USAGE_DETAIL },
    )
    .get(
      "/v1/namespaces/:nsid/usage/daily",
      ({ request, params, query }) =>
        readNamespace(
          request,
          params.nsid,
          () => ({ window: parseDailyWindow(query as QueryParams), groupBy: parseGroupBy(query as QueryParams) }),
          (tenant, { window, groupBy }) => dailyUsage(services, tenant, window, groupBy),
        ),
      { detail: DAILY_USAGE_DETAIL },
    )
    .get(
      "/v1/usage",
      async ({ principal, query }) => {
        const window = parseWindow(query as QueryParams);
        return services.accountReads.run(principal.accountId, () => accountUsageAggregate(services, principal, window));
      },
      {
        scope: "usage:read",
        detail: {
          summary: "Account-wide usage over [from, to): request rows plus the usage and pending_debit_recovery ledger entries",
          tags: ["usage"],
          "x-scope": "usage:read",
          description: `${WINDOW_DESCRIPTION} A namespace-bound credential sees only its own namespace.`,
          parameters: WINDOW_PARAMETERS,
        },
      },
    )
    .get(
      "/v1/requests/:request_id/settlement",
      async ({ principal, params }) => {
        // Elysia percent-decodes the segment; a malformed escape arrives as null.
        const requestId: unknown = params.request_id;
        if (typeof requestId !== "string" || requestId.length === 0) throw badRequest("request_id must be a percent-encoded path segment");
        return findSettlementReceipt(services, principal, requestId);
      },
      {
        scope: "usage:read",
        detail: {
          summary: "Settlement receipt of a request by its client-visible request id (x-request-id): state, usage buckets, final charge",
          tags: ["usage"],
          "x-scope": "usage:read",
          description: "request_id is the client-visible id (x-request-id), percent-encoded as one segment. 404 when no record with it is visible to the credential.",
        },
      },
    );
}
