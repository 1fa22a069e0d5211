import { ApiError } from "../../errors/api-error";
import type { Principal } from "../../auth/principal";

/**
 * Who approves a device code or consents to an authorization request: a person signed in
 * to the console (scopes = every scope), or an account-wide credential. A grant never
 * carries more than its approver's scopes.
 */
export interface Approver {
  accountId: string;
  scopes: readonly string[];
}

/**
 * The approver an API credential stands for. Only an account-wide credential may approve:
 * a namespace-bound one (every OAuth token is) would otherwise mint credentials for
 * namespaces it cannot see.
 */
export function approverFromPrincipal(principal: Principal): Approver {
  if (principal.namespaceId !== null) {
    throw new ApiError("permission_denied", "a namespace-bound credential cannot approve OAuth requests; use an account-wide credential");
  }
  return { accountId: principal.accountId, scopes: principal.scopes };
}
