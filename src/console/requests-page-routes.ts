import { Elysia } from "elysia";
import { parsePagination, type QueryParams } from "../management/usage/query-params";
import { listRequests } from "../management/usage/usage-service";
import type { ConsoleContext } from "./console-context";
import { managementPage, type QueryFields } from "./management-request";
import { requestsPage } from "./requests-page";

/** /console/requests: the history the JSON API lists under …/requests, through the same service. */
export function requestsPageRoutes(context: ConsoleContext) {
  return new Elysia({ name: "console-requests", normalize: false }).get("/console/requests", ({ request, query }) =>
    managementPage(context, request, query as QueryFields, async (req) => {
      const page = parsePagination(query as QueryParams);
      const listing = await listRequests(context.services, req.tenant, page);
      return requestsPage(req, listing.data, page);
    }),
  );
}
