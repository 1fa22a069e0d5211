import { Type } from "@sinclair/typebox";
import type { bodyValidator } from "../validate-body";

/** Every policy route exists namespace-scoped and in the legacy flat form (= the credential's own namespace). */
export const POLICY_BASES = ["/v1/namespaces/:nsid", "/v1"] as const;

export const nsidOf = (params: Record<string, string> | undefined): string => params?.nsid ?? "me";

/** A policy's display name: non-empty, no leading or trailing whitespace. */
export const PolicyName = Type.String({ minLength: 1, maxLength: 200, pattern: "^\\S(.*\\S)?$" });

/** An OpenAPI query parameter (Elysia documents path parameters itself). */
export function queryParameter(name: string, description: string, required: boolean) {
  return { name, in: "query" as const, required, description, schema: { type: "string" as const } };
}

/** The route options every policy route shares: its scope (checked by the auth macro) and its OpenAPI entry. */
export function routeDoc(
  scope: "policy:read" | "policy:write",
  summary: string,
  extra?: ReturnType<typeof bodyValidator>["doc"] | { parameters: ReturnType<typeof queryParameter>[] },
) {
  return { scope, detail: { summary, tags: ["policies"], "x-scope": scope, ...extra } };
}
