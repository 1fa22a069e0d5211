import { irError, isIrError, type IrError } from "../ir";
import { authenticate as resolveCaller, requireScope, type AuthDeps } from "../auth/auth-plugin";
import type { Principal } from "../auth/principal";
import { log } from "../observability/log";

export type Authenticated = { ok: true; principal: Principal } | { ok: false; error: IrError };

/**
 * Stage 1: the caller of an inference endpoint, or the error to answer with: 401/403 from
 * the credential, or 503 when the credential cannot be checked (database unreachable and
 * the key not cached) — the same fail-closed answer as admission.
 */
export async function authenticate(deps: AuthDeps, headers: Headers, requestId: string): Promise<Authenticated> {
  try {
    const principal = await resolveCaller(deps, headers);
    requireScope(principal, "inference:invoke");
    return { ok: true, principal };
  } catch (error) {
    // The credential's own refusal (401, 403): the shared auth code's error, answered in the client's protocol.
    if (isIrError(error)) return { ok: false, error };
    log.error("authentication unavailable", { requestId, error: error instanceof Error ? error.message : String(error) });
    return { ok: false, error: irError("service_unavailable", "authentication is temporarily unavailable; retry shortly", { retryAfter: 1 }) };
  }
}
