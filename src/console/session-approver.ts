import { ALL_SCOPES } from "../auth/scopes";
import { ApiError } from "../errors/api-error";
import type { Approver } from "../identity/oauth/approver";
import type { ConsoleContext } from "./console-context";
import { hasOwnOrigin } from "./request-origin";

/** The CSRF purpose of the decision API called with a console session. */
export const DEVICE_DECISION_PURPOSE = "device-decision";

/**
 * Lets `POST /oauth/device/decision` be called with a console session instead of a
 * Bearer credential. A cookie travels with cross-site requests too, so such a call must
 * also prove it comes from this site: the session's `x-csrf-token` for this purpose
 * (the device page carries it in a meta tag), or this server's own Origin header. A
 * foreign Origin is refused whatever it carries. A person signed in to the console
 * approves with every scope of their account; the grant still never carries more than
 * the client may have, nor any control-plane scope.
 */
export function consoleSessionApprover(context: ConsoleContext) {
  return async (request: Request): Promise<Approver | null> => {
    const session = await context.sessions.resolve(request);
    if (!session) return null;
    const tokenOk = session.checkCsrf(DEVICE_DECISION_PURPOSE, request.headers.get("x-csrf-token") ?? undefined);
    const originOk = hasOwnOrigin(request, context.services.config.publicUrl);
    if (context.foreignOrigin(request) || !(tokenOk || originOk)) {
      throw new ApiError("permission_denied", "a call with a console session needs the x-csrf-token header or this site's Origin");
    }
    return { accountId: session.accountId, scopes: ALL_SCOPES };
  };
}
