import { ALL_SCOPES, CONTROL_PLANE_SCOPES, hasScope, isValidScope } from "../../auth/scopes";
import type { OauthClient } from "./oauth-client";

/**
 * The scopes a request names (space-separated, RFC 6749 §3.3), or the client's default
 * when it names none; undefined when one is not a scope this service knows.
 */
export function requestedScopes(scope: string | undefined, client: OauthClient): string[] | undefined {
  if (scope === undefined || scope.trim() === "") return [...client.defaultScopes];
  const names = [...new Set(scope.split(" ").filter((name) => name !== ""))];
  return names.every(isValidScope) ? names : undefined;
}

/**
 * What a grant carries: every concrete scope that was requested (a wildcard such as
 * `policy:*` stands for each of its actions), that the approver holds and the client may
 * be given, less the control-plane scopes, which a namespace-bound credential never
 * carries. Concrete names, in the service's scope order.
 */
export function issuedScopes(requested: readonly string[], approverScopes: readonly string[], clientScopes: readonly string[]): string[] {
  return ALL_SCOPES.filter(
    (scope) =>
      !CONTROL_PLANE_SCOPES.has(scope) &&
      hasScope(requested, scope) &&
      hasScope(approverScopes, scope) &&
      hasScope(clientScopes, scope),
  );
}

/** What a request could ever be granted: the same rule with an approver who holds everything. */
export function grantableScopes(requested: readonly string[], client: OauthClient): string[] {
  return issuedScopes(requested, ALL_SCOPES, client.allowedScopes);
}
