import { Elysia } from "elysia";
import { byokPageRoutes } from "./byok-page-routes";
import type { ConsoleContext } from "./console-context";
import { keysPageRoutes } from "./keys-page-routes";
import { modelsPageRoutes } from "./models-page-routes";
import { oauthPageRoutes } from "./oauth-page-routes";
import { policiesPageRoutes } from "./policies-page-routes";
import { requestsPageRoutes } from "./requests-page-routes";
import { routingPresetsPageRoutes } from "./routing-presets-page-routes";

/**
 * The console's management pages (docs/console-and-cli.md "Console and sign-in"): request history, API keys, BYOK
 * keys, policies, routing presets and OAuth. Each reads and writes through the same
 * services as the JSON API, acting as the signed-in account; every form is checked for
 * the session, this site's Origin and the form's CSRF token before anything else.
 */
export function managementPageRoutes(context: ConsoleContext) {
  return new Elysia({ name: "console-management", normalize: false })
    .use(requestsPageRoutes(context))
    .use(keysPageRoutes(context))
    .use(byokPageRoutes(context))
    .use(policiesPageRoutes(context))
    .use(routingPresetsPageRoutes(context))
    .use(oauthPageRoutes(context))
    .use(modelsPageRoutes(context));
}
