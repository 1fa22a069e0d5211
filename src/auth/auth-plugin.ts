import { Elysia } from "elysia";
import { forbiddenScope, unauthorized } from "../errors/api-error";
import { extractCredential } from "./extract-credential";
import type { Principal } from "./principal";
import { hasScope } from "./scopes";
import { assertAddressablePathIds } from "./path-ids";

/** What authentication needs: the credential lookup (src/identity/credential-resolver.ts), nothing else (a route passes its services). */
export interface AuthDeps {
  credentials: { resolve(token: string): Promise<Principal | null> };
}

/** Resolves the caller or throws 401; shared with the inference pipeline. */
export async function authenticate(services: AuthDeps, headers: Headers): Promise<Principal> {
  const token = extractCredential(headers);
  if (!token) throw unauthorized("missing credential: send Authorization: Bearer <key> or x-api-key");
  const principal = await services.credentials.resolve(token);
  if (!principal) throw unauthorized("invalid, expired or revoked credential");
  return principal;
}

export function requireScope(principal: Principal, scope: string): void {
  if (!hasScope(principal.scopes, scope)) throw forbiddenScope(scope);
}

/**
 * `{ scope: "keys:read" }` on a route: authenticates the caller, checks the scope,
 * answers 404 for path ids that cannot exist (path-ids.ts) and puts `principal` in the
 * handler's context. Bodies are validated in the
 * handler (see validate-body.ts), so this always runs first.
 */
export function authPlugin(services: AuthDeps) {
  return new Elysia({ name: "auth", normalize: false }).macro({
    scope: (required: string) => ({
      async resolve({ request, params, route }) {
        const principal = await authenticate(services, request.headers);
        requireScope(principal, required);
        assertAddressablePathIds(params, route);
        return { principal };
      },
    }),
  });
}
