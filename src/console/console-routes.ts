import { Elysia } from "elysia";
import { findAccount, removeAccount, updateAccount } from "../management/account/account-service";
import { pickNamespace } from "./console-namespace";
import { signIn } from "../management/sessions/session-service";
import { ApiError } from "../errors/api-error";
import { log } from "../observability/log";
import { accountPage } from "./account-page";
import { asPage, field, forgedFormPage, signInFirst, waitText, type ConsoleContext } from "./console-context";
import { redirect } from "./console-page";
import type { ConsoleSession } from "./console-sessions";
import { errorPage } from "./error-page";
import { overviewData } from "./overview-data";
import type { QueryFields } from "./management-request";
import { overviewPage } from "./overview-page";
import { safeNextPath } from "./safe-next-path";
import { signInPage } from "./sign-in-page";

const DISPLAY_NAME = /^\S(.*\S)?$/;

function queryValue(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * The console's sign-in, overview and account pages (docs/console-and-cli.md "Console and sign-in").
 * Server-rendered HTML, no script; every form carries a CSRF token and a foreign Origin
 * is refused.
 */
export function consoleRoutes(context: ConsoleContext) {
  const { services, sessions, signInCsrf } = context;

  async function showSignIn(request: Request, next: string, extra: { error?: string; email?: string; status?: number; cookies?: string[] } = {}) {
    const issued = await signInCsrf.issue(request);
    return signInPage({ csrfToken: issued.token, next, ...extra, cookies: [...(extra.cookies ?? []), ...issued.cookies] });
  }

  /** The namespace `?ns=` names (404 when it is not the account's live one, an empty `?ns=` included), else `me`. */
  async function overviewNamespace(session: ConsoleSession, requested: string | undefined) {
    if (requested === "") throw new ApiError("not_found", "There is no such namespace in this account.");
    return pickNamespace(services, session.accountId, requested);
  }

  return new Elysia({ name: "console", normalize: false })
    .get("/console", ({ request, query }) =>
      asPage(async () => {
        const session = await sessions.resolve(request);
        if (!session) return showSignIn(request, safeNextPath(queryValue(query, "next")));
        const picked = await overviewNamespace(session, queryValue(query, "ns"));
        // The overview's reads (aggregate, two daily series, a thousand records) are one of the account's concurrent reads.
        const data = await services.accountReads.run(session.accountId, () => overviewData(services, session.accountId, picked, query as QueryFields));
        return overviewPage(session, data);
      }),
    )
    .post("/console/sign-in", ({ request, body }) =>
      asPage(async () => {
        const next = safeNextPath(field(body, "next"));
        const email = field(body, "email");
        if (context.foreignOrigin(request) || !(await signInCsrf.check(request, field(body, "csrf_token")))) {
          return showSignIn(request, next, { email, status: 403, error: "This sign-in form expired or did not come from this site. Please sign in again." });
        }
        let outcome;
        try {
          outcome = await signIn(services, email, field(body, "password"), context.clientAddress(request));
        } catch (error) {
          if (!(error instanceof ApiError) || error.kind !== "rate_limited") throw error;
          const retryAfter = error.retryAfter ?? 60;
          const page = await showSignIn(request, next, { email, status: 429, error: `Too many failed sign-ins. Try again in ${waitText(retryAfter)}.` });
          page.headers.set("retry-after", String(retryAfter));
          return page;
        }
        // The password changed between its check and the session (a reset signing the
        // account out): the old password is as wrong as any other.
        const cookie = outcome.ok ? await sessions.create(outcome.accountId, outcome.passwordHash) : undefined;
        if (!outcome.ok || cookie === undefined) {
          log.info("console sign-in refused", { address: context.clientAddress(request) });
          return showSignIn(request, next, { email, status: 401, error: "Email or password is incorrect." });
        }
        log.info("console sign-in", { account_id: outcome.accountId });
        // A fresh token for every sign-in: a session the browser held before (perhaps one
        // planted by someone else) is ended, never promoted.
        const previous = await sessions.resolve(request);
        if (previous) await sessions.destroy(previous);
        return redirect(next, [cookie]);
      }),
    )
    .post("/console/sign-out", ({ request, body }) =>
      asPage(async () => {
        const session = await sessions.resolve(request);
        if (!session) return redirect("/console");
        if (context.foreignOrigin(request) || !session.checkCsrf("sign-out", field(body, "csrf_token"))) return forgedFormPage(session);
        log.debug("console sign-out", { account_id: session.accountId });
        return redirect("/console", [await sessions.destroy(session)]);
      }),
    )
    .get("/console/account", ({ request, query }) =>
      asPage(async () => {
        const session = await sessions.resolve(request);
        if (!session) return signInFirst(request);
        const account = await findAccount(services, session.accountId);
        if (!account) return signInFirst(request);
        const saved = queryValue(query, "saved") === "1";
        return accountPage(session, { namespaceId: queryValue(query, "ns"), createdAt: account.createdAt, notice: saved ? "Saved." : undefined });
      }),
    )
    .post("/console/account", ({ request, body }) =>
      asPage(async () => {
        const session = await sessions.resolve(request);
        if (!session) return signInFirst(request);
        if (context.foreignOrigin(request) || !session.checkCsrf("account", field(body, "csrf_token"))) return forgedFormPage(session);
        const namespaceId = field(body, "ns") || undefined;
        const displayName = field(body, "display_name").trim();
        if ([...displayName].length > 100 || (displayName !== "" && !DISPLAY_NAME.test(displayName)) || displayName.includes("\0")) {
          const account = await findAccount(services, session.accountId);
          return accountPage(session, { namespaceId, createdAt: account!.createdAt, status: 400, error: "A display name is one line of at most 100 characters." });
        }
        await updateAccount(services, session.accountId, displayName === "" ? null : displayName);
        const query = namespaceId === undefined ? "?saved=1" : `?ns=${encodeURIComponent(namespaceId)}&saved=1`;
        return redirect(`/console/account${query}`);
      }),
    )
    .post("/console/account/delete", ({ request, body }) =>
      asPage(async () => {
        const session = await sessions.resolve(request);
        if (!session) return signInFirst(request);
        if (context.foreignOrigin(request) || !session.checkCsrf("account-delete", field(body, "csrf_token"))) return forgedFormPage(session);
        if (field(body, "confirm_email").trim().toLowerCase() !== session.email.toLowerCase()) {
          return errorPage(400, "Account not deleted", "The email typed did not match this account's. Nothing was deleted.", { signedInAs: session.email });
        }
        await removeAccount(services, session.accountId);
        log.info("account deleted from the console", { account_id: session.accountId });
        return redirect("/console", [await sessions.destroy(session)]);
      }),
    );
}
