import { Type } from "@sinclair/typebox";
import type { Principal } from "../../auth/principal";
import type { Services } from "../../services";
import { nsidOf, resolveTenant } from "../tenant";
import type { bodyValidator } from "../validate-body";
import type { PolicyScope } from "./policy-service";

/** Every policy route exists namespace-scoped and in the legacy flat form (= the credential's own namespace). */
export const POLICY_BASES = ["/v1/namespaces/:nsid", "/v1"] as const;

/** The namespace a policy route acts in (`{nsid}`, `me` on the flat paths), checked by the one tenant resolver first. */
export async function scopeOf(services: Services, principal: Principal, params: Record<string, string> | undefined): Promise<PolicyScope> {
  return { caller: principal, ...(await resolveTenant(services, principal, nsidOf(params))) };
}

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
