import { Type } from "@sinclair/typebox";
import { ALL_SCOPES, isControlPlaneScope, isValidScope } from "../../auth/scopes";
import { badRequest } from "../../errors/api-error";
import { bodyValidator } from "../validate-body";
import { assertRegistrableRedirectUri } from "./redirect-uri";

/** The grant types a client may be registered for (docs/api/identity.md "Identity: OAuth, clients, accounts"). */
export const CLIENT_GRANT_TYPES = ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"] as const;
/** A client needs one of these to obtain a first token; refresh_token only extends a grant. */
const INITIAL_GRANT_TYPES = new Set<string>(["authorization_code", "urn:ietf:params:oauth:grant-type:device_code"]);

const name = Type.String({ minLength: 1, maxLength: 200 });
const uris = Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 20 });
const scopes = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 });
const grantTypes = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 3 });

export const validateCreate = bodyValidator(
  Type.Object(
    {
      client_name: name,
      client_type: Type.Union([Type.Literal("confidential"), Type.Literal("public")]),
      redirect_uris: Type.Optional(uris),
      allowed_scopes: Type.Optional(scopes),
      allowed_grant_types: grantTypes,
    },
    { additionalProperties: false },
  ),
);

export const validateUpdate = bodyValidator(
  Type.Object(
    {
      client_name: Type.Optional(name),
      redirect_uris: Type.Optional(uris),
      allowed_scopes: Type.Optional(scopes),
      allowed_grant_types: Type.Optional(grantTypes),
    },
    { additionalProperties: false },
  ),
);

/** What a client registered without `allowed_scopes` may be issued: every scope but the control-plane ones. */
export const DEFAULT_ALLOWED_SCOPES: readonly string[] = ALL_SCOPES.filter((scope) => !isControlPlaneScope(scope));

export function checkGrantTypes(values: readonly string[]): string[] {
  const unique = [...new Set(values)];
  const unknown = unique.find((value) => !(CLIENT_GRANT_TYPES as readonly string[]).includes(value));
  if (unknown !== undefined) throw badRequest(`allowed_grant_types: unknown grant type "${unknown}" (one of ${CLIENT_GRANT_TYPES.join(", ")})`);
  if (!unique.some((value) => INITIAL_GRANT_TYPES.has(value))) {
    throw badRequest("allowed_grant_types must include authorization_code or urn:ietf:params:oauth:grant-type:device_code");
  }
  return unique;
}

export function checkRedirectUris(values: readonly string[]): string[] {
  values.forEach((value, index) => assertRegistrableRedirectUri(value, `redirect_uris.${index}`));
  return [...new Set(values)];
}

export function checkAllowedScopes(values: readonly string[]): string[] {
  const unique = [...new Set(values)];
  if (unique.length === 0) throw badRequest("allowed_scopes must name at least one scope");
  const invalid = unique.find((scope) => !isValidScope(scope));
  if (invalid !== undefined) throw badRequest(`allowed_scopes: unknown scope "${invalid}"`);
  const controlPlane = unique.find(isControlPlaneScope);
  if (controlPlane !== undefined) throw badRequest(`allowed_scopes: ${controlPlane} is never issued through OAuth`);
  return unique;
}

/** A client that can receive authorization codes needs somewhere to receive them. */
export function checkCodeClientHasRedirect(grantTypes: readonly string[], redirectUris: readonly string[]): void {
  if (grantTypes.includes("authorization_code") && redirectUris.length === 0) {
    throw badRequest("redirect_uris must name at least one URI for a client with the authorization_code grant");
  }
}
