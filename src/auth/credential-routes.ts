/** A route as Elysia lists it (`app.routes`): its method, path pattern and hooks. */
interface ListedRoute {
  method: string;
  path: string;
  hooks?: unknown;
}

/** The OpenAPI entry a route declares (`detail`), as far as this file reads it. */
interface RouteDetail {
  tags?: unknown;
  "x-scope"?: unknown;
}

function detailOf(route: ListedRoute): RouteDetail {
  const detail = (route.hooks as { detail?: unknown } | undefined)?.detail;
  return typeof detail === "object" && detail !== null ? (detail as RouteDetail) : {};
}

/**
 * The routes whose answers need a credential, as `METHOD path` keys (the form
 * `credentialRouteKey` builds): every management route, each of which documents the scope
 * it checks as `x-scope`, and the operator API (tag `admin`). Inference routes name a scope
 * too, but their answers are out of this: Bun's router serves them, with headers of their own.
 */
export function credentialRouteKeys(routes: readonly ListedRoute[]): Set<string> {
  const keys = new Set<string>();
  for (const route of routes) {
    const detail = detailOf(route);
    const tags = Array.isArray(detail.tags) ? detail.tags : [];
    const managed = detail["x-scope"] !== undefined && !tags.includes("inference");
    if (managed || tags.includes("admin")) keys.add(credentialRouteKey(route.method, route.path));
  }
  return keys;
}

export function credentialRouteKey(method: string, path: string): string {
  return `${method} ${path}`;
}
