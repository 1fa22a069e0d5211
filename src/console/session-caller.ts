import type { Caller } from "../auth/principal";
import { ALL_SCOPES } from "../auth/scopes";
import type { ConsoleSession } from "./console-sessions";

/**
 * The caller a console page acts as: the signed-in account itself, account-wide, with
 * every scope (the same reach as the account-wide key the account was created with).
 * It is no credential: nothing here authenticates the JSON API or an inference request.
 */
export function sessionCaller(session: ConsoleSession): Caller {
  return { accountId: session.accountId, namespaceId: null, scopes: [...ALL_SCOPES] };
}
