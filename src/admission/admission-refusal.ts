import { irError, type IrError, type IrWarning } from "../ir";
import { REFUSAL_KIND, type Refusal } from "./admission-check";

/**
 * A refusal as the error the client gets, the one place where admission meets the
 * protocols (each codec renders the kind in its own shape, docs/api/policies.md "Policies"). A policy's
 * refusal starts its message with its code: Anthropic Messages has no field for the code,
 * and its clients read it there. A 429 carries its Retry-After.
 */
export function refusalError(refusal: Refusal): IrError {
  const message = refusal.policy ? `${refusal.code}: ${refusal.message}` : refusal.message;
  const extra = refusal.retryAfterSecs !== undefined ? { retryAfter: refusal.retryAfterSecs } : {};
  return irError(REFUSAL_KIND[refusal.code], message, extra);
}

/** Code of the record warning that names the policy that refused a request. */
export const REFUSED_BY_POLICY = "refused_by_policy";

/** What the request record keeps of a policy's refusal (docs/api/policies.md "Policies"): the policy's id in `field`, its name and code in the message. */
export function refusalWarning(refusal: Refusal): IrWarning | undefined {
  const policy = refusal.policy;
  if (!policy) return undefined;
  return {
    code: REFUSED_BY_POLICY,
    field: policy.policyId,
    message: `${refusal.code} by policy "${policy.policyName}" bound to ${policy.principal.type} ${policy.principal.id}`,
  };
}
