import { Elysia } from "elysia";
import { parseHistoryPage, RECORD_ID, type HistoryPage, type QueryParams } from "../management/usage/query-params";
import { parseRequestFilters } from "../management/usage/request-filters";
import { dailyUsage, eachRequestPage, listRequests, requestDetail, UNKNOWN_AFTER } from "../management/usage/usage-service";
import { ApiError, badRequest, notFound } from "../errors/api-error";
import type { ConsoleContext } from "./console-context";
import { managementPage, type ManagementRequest, type QueryFields } from "./management-request";
import { requestDetailPage } from "./request-detail-page";
import { apiFilterQuery, requestFilters } from "./request-filters";
import { requestKeys } from "./request-keys";
import { heldUntilDone, requestsCsvResponse } from "./requests-csv";
import { requestsPage, requestsUrl } from "./requests-page";

/** The catalog's models in its order, then those only the history names, sorted. */
function modelChoices(catalog: readonly string[], history: readonly (string | null)[]): string[] {
  const known = new Set(catalog);
  const extra = [...new Set(history.filter((model): model is string => model !== null && !known.has(model)))].sort();
  return [...catalog, ...extra];
}

/** Rows read from the history per page of the CSV export. */
const CSV_PAGE_ROWS = 100;

/**
 * /console/requests: the history the JSON API lists under …/requests, through the same
 * service and the same filter parser (the page's fields become the API's query); one
 * request's details; and the filtered set as CSV.
 */
export function requestsPageRoutes(context: ConsoleContext) {
  const { services } = context;
  /**
   * A page of the history, narrowed by the JSON API's own query parameters. A link whose
   * `after` is no request of this namespace (stale, edited, another namespace's) gets words
   * for a person instead of the API's; the same words whichever it was.
   */
  const list = (req: ManagementRequest, apiQuery: Record<string, string>, page: HistoryPage) =>
    services.accountReads.run(req.tenant.accountId, () => listRequests(services, req.tenant, page, parseRequestFilters(apiQuery))).catch((error: unknown) => {
      if (error instanceof ApiError && error.message === UNKNOWN_AFTER) throw badRequest("This page starts after a request this namespace does not have. Start again from the newest requests.");
      throw error;
    });
  const keyNames = async (req: ManagementRequest) => new Map((await requestKeys(services, req.tenant)).map((key) => [key.id, key.displayName]));

  return new Elysia({ name: "console-requests", normalize: false })
    .get("/console/requests", ({ request, query }) =>
      managementPage(context, request, query as QueryFields, async (req) => {
        const page = parseHistoryPage(query as QueryParams);
        const filters = requestFilters(query as QueryFields);
        const now = new Date();
        const history = { from: new Date(Date.UTC(req.namespace.createdAt.getUTCFullYear(), req.namespace.createdAt.getUTCMonth(), req.namespace.createdAt.getUTCDate())), to: now };
        const [listing, keys, used] = await Promise.all([
          list(req, apiFilterQuery(filters), page),
          requestKeys(services, req.tenant),
          // Every model the namespace's history names (its daily rollups by model), so a
          // model no longer in the catalog, or one a request named and was refused, can be picked.
          dailyUsage(services, req.tenant, history, "model"),
        ]);
        const models = modelChoices(services.catalog.listModels().map((model) => model.id), used.data.map((row) => row.group));
        return requestsPage(req, { records: listing.data, page, nextAfter: listing.next_after, filters, keys, models });
      }),
    )
    .get("/console/requests.csv", ({ request, query }) =>
      managementPage(context, request, query as QueryFields, async (req) => {
        const apiQuery = apiFilterQuery(requestFilters(query as QueryFields));
        // Bounded by the moment the export starts, so rows written meanwhile do not join it.
        apiQuery.to ??= new Date().toISOString();
        // A malformed filter is the 400 page here, before any CSV is sent.
        const filters = parseRequestFilters(apiQuery);
        const names = await keyNames(req);
        // The export holds one of the account's concurrent reads until its last page is read
        // or the client goes away (heldUntilDone), however long the download takes.
        const release = services.accountReads.enter(req.tenant.accountId);
        const pages = heldUntilDone(eachRequestPage(services, req.tenant, filters, CSV_PAGE_ROWS), release);
        return requestsCsvResponse(pages, names, `requests-${req.namespace.id}.csv`);
      }),
    )
    .get("/console/requests/:recordId", ({ request, query, params }) =>
      managementPage(context, request, query as QueryFields, async (req) => {
        // Record ids are short printable ASCII: anything else (a NUL, a lone surrogate) was never one.
        if (!RECORD_ID.test(params.recordId)) throw notFound("request");
        const [detail, keys] = await Promise.all([requestDetail(services, req.tenant, params.recordId), requestKeys(services, req.tenant)]);
        return requestDetailPage(req, detail, keys, requestsUrl("/console/requests", req.namespace.id, requestFilters(query as QueryFields)));
      }),
    );
}
