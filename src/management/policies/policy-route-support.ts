import { Type } from "@sinclair/typebox";
import type { Principal } from "../../auth/principal";
import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { tenantOfPath } from "../tenant";
import type { PolicyScope } from "./policy-service";

/** The namespace a policy route acts in (`{nsid}`, `me` on the flat paths), checked by the one tenant resolver first. */
export async function scopeOf(services: Services, principal: Principal, params: Record<string, string> | undefined): Promise<PolicyScope> {
  return { caller: principal, ...(await tenantOfPath(services, principal, params)) };
}

/** A policy's display name: non-empty, no leading or trailing whitespace. */
export const PolicyName = Type.String({ minLength: 1, maxLength: 200, pattern: "^\\S(.*\\S)?$" });

/** The route options every policy route shares: its scope (checked by the auth macro) and its OpenAPI entry. */
export const routeDoc = routeDocs<"policy:read" | "policy:write">("policies");
