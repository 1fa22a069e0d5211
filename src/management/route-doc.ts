import type { bodyValidator } from "./validate-body";

/** An OpenAPI query parameter (Elysia documents path parameters itself). */
export function queryParameter(name: string, description: string, required: boolean) {
  return { name, in: "query" as const, required, description, schema: { type: "string" as const } };
}

type RouteDocExtra = ReturnType<typeof bodyValidator>["doc"] | { parameters: ReturnType<typeof queryParameter>[] };

/**
 * The route options of one resource's routes: the scope the auth macro checks, and the
 * OpenAPI entry (summary, the resource's tag, `x-scope`, a body or query parameters).
 */
export function routeDocs<Scope extends string>(tag: string) {
  return (scope: Scope, summary: string, extra?: RouteDocExtra) => ({ scope, detail: { summary, tags: [tag], "x-scope": scope, ...extra } });
}
