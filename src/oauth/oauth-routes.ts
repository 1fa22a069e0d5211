import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { ApiError, isOauthError } from "../errors/api-error";
import { authenticate } from "../auth/auth-plugin";
import { extractCredential } from "../auth/extract-credential";
import { markNoStore } from "../auth/tokens";
import { BodyTooLargeError, readBodyWithin } from "../http/request-body";
import { clientAddress } from "../http/client-address";
import { bodyValidator } from "../management/validate-body";
import type { Services } from "../services";
import { approverFromPrincipal, type Approver } from "../identity/oauth/approver";
import { startDeviceAuthorization } from "../identity/oauth/device-authorization";
import { decideDeviceCode } from "../identity/oauth/device-flow";
import { oauthDeps } from "./oauth-deps";
import { oauthErrorBody, oauthErrorResponse, oauthJsonResponse } from "../errors/oauth-error";
import { parseOauthParams } from "../identity/oauth/oauth-params";
import { revokeToken } from "../identity/oauth/revocation";
import { DEVICE_AUTHORIZATION_PATH, DEVICE_DECISION_PATH, REVOCATION_PATH, serverMetadata, TOKEN_PATH } from "./server-metadata";
import { handleTokenRequest } from "../identity/oauth/token-endpoint";
import { publicCorsPreflight, withPublicCors } from "./public-cors";

/** The form-encoded endpoints read their own bodies (app.ts leaves them unparsed): a repeated parameter must be seen to be refused. */
export const OAUTH_FORM_PATHS: ReadonlySet<string> = new Set([DEVICE_AUTHORIZATION_PATH, TOKEN_PATH, REVOCATION_PATH]);

export interface OauthRouteOptions {
  /**
   * Another way to approve a device code besides an account-wide Bearer credential (the
   * console's session): the approver, or null when the request carries none. It must
   * do its own CSRF check; it is asked only when the request has no credential header.
   */
  sessionApprover?: (request: Request) => Promise<Approver | null>;
}

const validateDecision = bodyValidator(
  Type.Object(
    {
      user_code: Type.String({ minLength: 1, maxLength: 64 }),
      namespace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      approve: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
);

/** The decision API speaks OAuth's vocabulary for a bad request: `invalid_request`. */
function invalidRequest(error: ApiError<"invalid_request">): Response {
  return new Response(JSON.stringify(oauthErrorBody(error)), { status: error.status, headers: { "content-type": "application/json" } });
}

/**
 * The OAuth 2.0 authorization server's machine endpoints: discovery (RFC 8414), device
 * authorization (RFC 8628), token, revocation (RFC 7009) and the device decision API.
 * The pages a person sees (`/oauth/device`, `/oauth/authorize`) are the console's, built
 * on device-flow.ts and authorization-request.ts.
 */
export function oauthRoutes(services: Services, options: OauthRouteOptions = {}) {
  const deps = oauthDeps(services);
  const limit = services.config.maxManagementBodyBytes;

  /** Reads and parses a form endpoint's body; OAuth errors become RFC 6749 §5.2 responses. */
  const formEndpoint = async (request: Request, handle: (params: Map<string, string>) => Promise<Response>): Promise<Response> => {
    try {
      const text = await readBodyWithin(request, limit);
      return await handle(parseOauthParams(text, request.headers.get("content-type")));
    } catch (error) {
      if (isOauthError(error)) return oauthErrorResponse(error);
      if (error instanceof BodyTooLargeError) throw new ApiError("payload_too_large", error.message, { headers: { connection: "close" } });
      throw error;
    }
  };

  const decisionApprover = async (request: Request): Promise<Approver> => {
    if (extractCredential(request.headers) === undefined && options.sessionApprover) {
      const approver = await options.sessionApprover(request);
      if (approver) return approver;
    }
    return approverFromPrincipal(await authenticate(services, request.headers));
  };

  const routes = new Elysia({ name: "oauth", normalize: false })
    .get("/.well-known/oauth-authorization-server", () => withPublicCors(Response.json(serverMetadata(services.config.publicUrl))), {
      detail: { summary: "OAuth 2.0 authorization server metadata (RFC 8414)", tags: ["oauth"] },
    })
    .post(
      DEVICE_AUTHORIZATION_PATH,
      async ({ request }) => withPublicCors(await formEndpoint(request, async (params) => oauthJsonResponse(await startDeviceAuthorization(deps, params, request.headers)))),
      { detail: { summary: "Start a device authorization (RFC 8628): form client_id, scope", tags: ["oauth"] } },
    )
    .post(
      TOKEN_PATH,
      async ({ request }) => withPublicCors(await formEndpoint(request, async (params) => oauthJsonResponse(await handleTokenRequest(deps, params, request.headers)))),
      { detail: { summary: "Token endpoint: device_code, authorization_code and refresh_token grants", tags: ["oauth"] } },
    )
    .post(
      REVOCATION_PATH,
      async ({ request }) =>
        withPublicCors(
          await formEndpoint(request, async (params) => {
            await revokeToken(deps, params, request.headers);
            return oauthJsonResponse({});
          }),
        ),
      { detail: { summary: "Revoke a grant by its access or refresh token (RFC 7009)", tags: ["oauth"] } },
    );
  // Preflights: browsers ask before a cross-origin POST with a form or JSON body.
  routes.options("/.well-known/oauth-authorization-server", () => publicCorsPreflight("GET"));
  for (const path of [DEVICE_AUTHORIZATION_PATH, TOKEN_PATH, REVOCATION_PATH]) routes.options(path, () => publicCorsPreflight("POST"));
  return routes
    .post(
      DEVICE_DECISION_PATH,
      async ({ request, body, set }) => {
        // An authenticated answer, like the management API's (app.ts marks those).
        markNoStore(set);
        const approver = await decisionApprover(request);
        try {
          const input = validateDecision(body);
          const status = await decideDeviceCode(deps, {
            userCode: input.user_code,
            approver,
            namespaceId: input.namespace_id ?? null,
            approve: input.approve,
            address: clientAddress(request, services.config.trustedProxyHops),
          });
          return { status };
        } catch (error) {
          if (error instanceof ApiError && error.kind === "invalid_request") return invalidRequest(error);
          throw error;
        }
      },
      {
        detail: {
          summary: "Approve or deny a device code: JSON {user_code, namespace_id, approve}; an account-wide credential",
          tags: ["oauth"],
          ...validateDecision.doc,
        },
      },
    );
}
