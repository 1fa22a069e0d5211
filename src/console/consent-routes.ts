import { Elysia } from "elysia";
import { ALL_SCOPES } from "../auth/scopes";
import { accountNamespaces } from "../management/namespaces/namespace-service";
import { checkAuthorizeRequest, denyAuthorization, issueAuthorizationCode } from "../identity/oauth/authorization-request";
import { grantableScopes } from "../identity/oauth/issued-scopes";
import { clientPublisher, findOauthClient } from "../identity/oauth/oauth-client";
import { oauthDeps } from "../oauth/oauth-deps";
import { AUTHORIZE_PATH } from "../oauth/server-metadata";
import { log } from "../observability/log";
import { parseAuthorizeQuery } from "./authorize-query";
import { asPage, field, forgedFormPage, type ConsoleContext } from "./console-context";
import { redirect } from "./console-page";
import { consentPage } from "./consent-page";
import { errorPage } from "./error-page";

function cannotContinue(description: string): Response {
  return errorPage(400, "This app's request cannot continue", `The app sent a request this server cannot accept (${description}). Nothing was shared with it.`);
}

/**
 * `/oauth/authorize` (RFC 6749 §4.1 with PKCE): the consent page. The request is checked
 * before anything else: a problem with the client or its redirect URI is shown here and
 * never redirected to; other problems go back to the client. Then sign-in if needed
 * (the query survives the round trip as `next`), then the consent form. The form carries
 * the original query, and the POST checks it all over again: nothing the browser sends
 * back (a redirect URI above all) is trusted without that.
 */
export function consentRoutes(context: ConsoleContext) {
  const { services, sessions } = context;
  const deps = oauthDeps(services);
  const sql = services.db.sql;

  /** The checked request, or the response that ends it (an error page, or a redirect back to the client). */
  async function check(rawQuery: string) {
    const parsed = parseAuthorizeQuery(rawQuery);
    if (!parsed.ok) return { response: cannotContinue(parsed.description) } as const;
    const checked = await checkAuthorizeRequest(deps, parsed.params);
    if (checked.kind === "show_error") return { response: cannotContinue(checked.description) } as const;
    if (checked.kind === "redirect") return { response: redirect(checked.location, [], 302) } as const;
    return { request: checked.request } as const;
  }

  const signInFirst = (rawQuery: string) => redirect(`/console?next=${encodeURIComponent(`${AUTHORIZE_PATH}?${rawQuery}`)}`);

  return new Elysia({ name: "console-consent", normalize: false })
    .get(AUTHORIZE_PATH, ({ request }) =>
      asPage(async () => {
        const rawQuery = new URL(request.url).search.slice(1);
        const checked = await check(rawQuery);
        if (checked.response) return checked.response;
        const session = await sessions.resolve(request);
        if (!session) return signInFirst(rawQuery);
        const client = await findOauthClient(sql, checked.request.clientId);
        if (!client) return cannotContinue("unknown client_id");
        return consentPage(session, {
          clientName: checked.request.clientName,
          publisher: await clientPublisher(sql, client),
          redirectUri: checked.request.redirectUri,
          scopes: grantableScopes(checked.request.scopes, client),
          query: rawQuery,
          namespaces: await accountNamespaces(services, session.accountId),
        });
      }),
    )
    .post(AUTHORIZE_PATH, ({ request, body }) =>
      asPage(async () => {
        const rawQuery = field(body, "authorize_query");
        const session = await sessions.resolve(request);
        if (!session) return signInFirst(rawQuery);
        if (context.foreignOrigin(request) || !session.checkCsrf("consent", field(body, "csrf_token"))) return forgedFormPage(session);
        const checked = await check(rawQuery);
        if (checked.response) return checked.response;
        const decision = field(body, "decision");
        if (decision !== "allow" && decision !== "deny") return errorPage(400, "Request refused", "Choose Allow or Deny.", { signedInAs: session.email });
        log.info("authorization consent", { account_id: session.accountId, client_id: checked.request.clientId, decision });
        if (decision === "deny") return redirect(denyAuthorization(checked.request));
        const approver = { accountId: session.accountId, scopes: ALL_SCOPES };
        return redirect(await issueAuthorizationCode(deps, checked.request, approver, field(body, "namespace_id")));
      }),
    );
}
