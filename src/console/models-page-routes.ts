import { Elysia } from "elysia";
import { cachedProviderBodies, modelBodies } from "../public/discovery-routes";
import type { ConsoleContext } from "./console-context";
import { managementPage, type QueryFields } from "./management-request";
import { modelsPage } from "./models-page";

/** /console/models: the catalog and the providers' live figures, as discovery serves them. */
export function modelsPageRoutes(context: ConsoleContext) {
  return new Elysia({ name: "console-models", normalize: false }).get("/console/models", ({ request, query }) =>
    managementPage(context, request, query as QueryFields, async (req) => modelsPage(req, modelBodies(context.services), (await cachedProviderBodies(context.services)).value)),
  );
}
