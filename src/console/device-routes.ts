import { Elysia } from "elysia";
import { ALL_SCOPES } from "../auth/scopes";
import { accountNamespaces } from "../management/namespaces/namespace-service";
import { ApiError } from "../errors/api-error";
import { log } from "../observability/log";
import { describeDeviceCode, decideDeviceCode } from "../identity/oauth/device-flow";
import { grantableScopes } from "../identity/oauth/issued-scopes";
import { clientPublisher, findOauthClient } from "../identity/oauth/oauth-client";
import { oauthDeps } from "../oauth/oauth-deps";
import { DEVICE_VERIFICATION_PATH } from "../oauth/server-metadata";
import { asPage, field, forgedFormPage, signInFirst, type ConsoleContext } from "./console-context";
import { redirect } from "./console-page";
import { deviceCodeEntryPage, deviceConfirmationPage, deviceDonePage } from "./device-page";
import { errorPage } from "./error-page";

const UNKNOWN_CODE = "That code is not valid, or it has expired or was already used. Check it against your device, or start the sign-in on the device again.";

/**
 * The device flow's verification page (RFC 8628 §3.3): `GET /oauth/device` asks for the
 * user code (prefilled from `?user_code=`), then shows who asks for what; the form
 * decides. A visitor without a session signs in first and comes back here. Every code
 * that does not exist counts against the client address (device-flow.ts).
 */
export function deviceRoutes(context: ConsoleContext) {
  const { services, sessions } = context;
  const deps = oauthDeps(services);
  const sql = services.db.sql;

  return new Elysia({ name: "console-device", normalize: false })
    .get(DEVICE_VERIFICATION_PATH, ({ request, query }) =>
      asPage(async () => {
        const session = await sessions.resolve(request);
        if (!session) return signInFirst(request);
        const typed = typeof query.user_code === "string" ? query.user_code.trim() : "";
        if (typed === "") return deviceCodeEntryPage(session);
        const device = await describeDeviceCode(deps, typed, context.clientAddress(request));
        const client = device && (await findOauthClient(sql, device.clientId));
        if (!device || !client) return deviceCodeEntryPage(session, { userCode: typed, error: UNKNOWN_CODE, status: 400 });
        return deviceConfirmationPage(session, {
          userCode: device.userCode,
          clientName: device.clientName,
          publisher: await clientPublisher(sql, client),
          scopes: grantableScopes(device.scopes, client),
          namespaces: await accountNamespaces(services, session.accountId),
        });
      }),
    )
    .post(DEVICE_VERIFICATION_PATH, ({ request, body }) =>
      asPage(async () => {
        const userCode = field(body, "user_code");
        const session = await sessions.resolve(request);
        if (!session) return redirect(`/console?next=${encodeURIComponent(`${DEVICE_VERIFICATION_PATH}?user_code=${encodeURIComponent(userCode)}`)}`);
        if (context.foreignOrigin(request) || !session.checkCsrf("device", field(body, "csrf_token"))) return forgedFormPage(session);
        const decision = field(body, "decision");
        if (decision !== "approve" && decision !== "deny") return errorPage(400, "Request refused", "Choose Approve or Deny.", { signedInAs: session.email });
        const approve = decision === "approve";
        try {
          await decideDeviceCode(deps, {
            userCode,
            approver: { accountId: session.accountId, scopes: ALL_SCOPES },
            namespaceId: field(body, "namespace_id") || null,
            approve,
            address: context.clientAddress(request),
          });
        } catch (error) {
          if (error instanceof ApiError && error.kind === "invalid_request") return deviceCodeEntryPage(session, { error: UNKNOWN_CODE, status: 400 });
          if (error instanceof ApiError && error.kind === "not_found") return errorPage(404, "Namespace not found", "Pick one of your namespaces and try again.", { signedInAs: session.email });
          throw error;
        }
        log.info("device code decided in the console", { account_id: session.accountId, approved: approve });
        return deviceDonePage(session, approve);
      }),
    );
}
