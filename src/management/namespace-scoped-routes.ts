import { Elysia } from "elysia";
import { authPlugin, type AuthDeps } from "../auth/auth-plugin";

/** A namespace-scoped route exists under /v1/namespaces/{nsid} and in the legacy flat form (`me`). */
export const NAMESPACE_BASES = ["/v1/namespaces/:nsid", "/v1"] as const;

function authenticatedRoutes(name: string, deps: AuthDeps) {
  return new Elysia({ name, normalize: false }).use(authPlugin(deps));
}

/**
 * One resource's namespace-scoped routes behind the auth plugin: `declare` adds them under
 * each of NAMESPACE_BASES, so the two forms of a path cannot drift apart.
 */
export function namespaceScopedRoutes(
  name: string,
  deps: AuthDeps,
  declare: (routes: ReturnType<typeof authenticatedRoutes>, base: (typeof NAMESPACE_BASES)[number]) => unknown,
) {
  const routes = authenticatedRoutes(name, deps);
  for (const base of NAMESPACE_BASES) declare(routes, base);
  return routes;
}
