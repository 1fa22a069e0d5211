import { Elysia } from "elysia";
import { findRequestDetail } from "../management/usage/request-detail-service";
import { parsePagination, type QueryParams } from "../management/usage/query-params";
import { parseRequestFilters } from "../management/usage/request-filters";
import { listRequests } from "../management/usage/usage-service";
import type { ConsoleContext } from "./console-context";
import { managementPage, type ManagementRequest, type QueryFields } from "./management-request";
import { requestDetailPage } from "./request-detail-page";
import { apiFilterQuery, requestFilters } from "./request-filters";
import { requestKeys } from "./request-keys";
import { requestsCsvResponse } from "./requests-csv";
import { requestsPage, requestsUrl } from "./requests-page";

/**
 * /console/requests: the history the JSON API lists under …/requests, through the same
 * service and the same filter parser (the page's fields become the API's query); one
 * request's details; and the filtered set as CSV.
 */
export function requestsPageRoutes(context: ConsoleContext) {
  const { services } = context;
  /** A page of the history, narrowed by the JSON API's own query parameters. */
  const list = (req: ManagementRequest, apiQuery: Record<string, string>, offset: number, limit: number) =>
    listRequests(services, req.tenant, { offset, limit }, parseRequestFilters(apiQuery)).then((listing) => listing.data);
  const keyNames = async (req: ManagementRequest) => new Map((await requestKeys(services, req.tenant)).map((key) => [key.id, key.display_name]));

  return new Elysia({ name: "console-requests", normalize: false })
    .get("/console/requests", ({ request, query }) =>
      managementPage(context, request, query as QueryFields, async (req) => {
        const page = parsePagination(query as QueryParams);
        const filters = requestFilters(query as QueryFields);
        const [records, keys] = await Promise.all([list(req, apiFilterQuery(filters), page.offset, page.limit), requestKeys(services, req.tenant)]);
        const models = services.catalog.listModels().map((model) => model.id);
        return requestsPage(req, { records, page, filters, keys, models });
      }),
    )
    .get("/console/requests.csv", ({ request, query }) =>
      managementPage(context, request, query as QueryFields, async (req) => {
        const apiQuery = apiFilterQuery(requestFilters(query as QueryFields));
        // Bounded by the moment the export starts, so rows written meanwhile do not shift its pages.
        apiQuery.to ??= new Date().toISOString();
        parseRequestFilters(apiQuery); // a malformed filter is the 400 page before any CSV is sent
        return requestsCsvResponse((offset, limit) => list(req, apiQuery, offset, limit), await keyNames(req), `requests-${req.namespace.id}.csv`);
      }),
    )
    .get("/console/requests/:requestId", ({ request, query, params }) =>
      managementPage(context, request, query as QueryFields, async (req) => {
        const [detail, keys] = await Promise.all([findRequestDetail(services, req.tenant, params.requestId), requestKeys(services, req.tenant)]);
        return requestDetailPage(req, detail, keys, requestsUrl("/console/requests", req.namespace.id, requestFilters(query as QueryFields)));
      }),
    );
}
