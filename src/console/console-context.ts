import { ApiError } from "../errors/api-error";
import { queryTooLong, replicaConflict, REPLICA_CONFLICT_RETRY_SECS } from "../errors/query-timeout";
import { isReplicaConflict, isStatementTimeout } from "../db/errors";
import { TOO_MANY_READS } from "../http/account-read-gate";
import { log } from "../observability/log";
import { clientAddress } from "../http/client-address";
import type { Services } from "../services";
import { ConsoleSessions, type ConsoleSession } from "./console-sessions";
import { errorPage } from "./error-page";
import { redirect } from "./console-page";
import { hasForeignOrigin } from "./request-origin";
import { SignInCsrf } from "./sign-in-csrf";

/** What every console page and form handler shares, built once per app. */
export interface ConsoleContext {
  services: Services;
  sessions: ConsoleSessions;
  signInCsrf: SignInCsrf;
  clientAddress(request: Request): string;
  /** Whether a POST names another site as its Origin (refused whatever else it carries). */
  foreignOrigin(request: Request): boolean;
}

export function createConsoleContext(services: Services): ConsoleContext {
  const secure = services.config.publicUrl.startsWith("https:");
  return {
    services,
    sessions: new ConsoleSessions(services, secure, services.config.consoleSessionMaxAgeMs),
    signInCsrf: new SignInCsrf(services, secure),
    clientAddress: (request) => clientAddress(request, services.config.trustedProxyHops),
    foreignOrigin: (request) => hasForeignOrigin(request, services.config.publicUrl),
  };
}

/** Where a page that needs a session sends a visitor without one: sign-in, then back here. */
export function signInFirst(request: Request): Response {
  const url = new URL(request.url);
  return redirect(`/console?next=${encodeURIComponent(url.pathname + url.search)}`);
}

/** The 403 page for a form that failed its CSRF or Origin check. */
export function forgedFormPage(session?: ConsoleSession): Response {
  return errorPage(403, "Request refused", "This form did not come from a page of this console, or it has expired. Go back, reload the page and try again.", {
    signedInAs: session?.email,
  });
}

/**
 * Runs a page or form handler; a failure becomes a readable page in the right status,
 * never the JSON error body the API routes answer with.
 */
export async function asPage(handler: () => Promise<Response>): Promise<Response> {
  try {
    return await handler();
  } catch (error) {
    if (error instanceof ApiError) {
      if (error.kind === "rate_limited") {
        const retryAfter = error.retryAfter ?? 60;
        if (error.message.startsWith(TOO_MANY_READS)) {
          return errorPage(429, "Too many pages at once", "This account has too many history, usage or export pages loading at once. Try again when one has finished.", { retryAfterSecs: retryAfter });
        }
        return errorPage(429, "Too many attempts", `Too many failed attempts. Try again in ${waitText(retryAfter)}.`, { retryAfterSecs: retryAfter });
      }
      if (error.status < 500) return errorPage(error.status, "Request refused", error.message);
      if (error.kind === "service_unavailable") return errorPage(error.status, "Try again", error.message);
    }
    if (isStatementTimeout(error)) return errorPage(503, "Too much to read at once", queryTooLong().message);
    if (isReplicaConflict(error)) return errorPage(503, "Try again", replicaConflict().message, { retryAfterSecs: REPLICA_CONFLICT_RETRY_SECS });
    log.error("console page failed", { error: error instanceof Error ? error.message : String(error) });
    return errorPage(500, "Something went wrong", "The console could not complete this request. Try again in a moment.");
  }
}

export function waitText(seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  return minutes <= 1 ? "a minute" : `${minutes} minutes`;
}

/** A form field as a string ("" when absent or not a string). */
export function field(body: unknown, name: string): string {
  if (typeof body !== "object" || body === null) return "";
  const value = Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined;
  // A lone surrogate is no text a person typed, and would throw later (encodeURIComponent,
  // PostgreSQL): such a field reads as empty, like a missing one.
  return typeof value === "string" && value.isWellFormed() ? value : "";
}
