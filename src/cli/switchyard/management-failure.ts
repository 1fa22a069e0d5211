import { CliError, LOGIN_HINT } from "./cli-error";
import { errorDescription, type HttpResponse } from "./http-client";

const MISSING_SCOPE = "missing required scope: ";

export interface CredentialDescription {
  kind: "api_key" | "oauth";
  /** The scopes the stored sign-in was granted (OAuth only). */
  scopes: string[];
}

/**
 * A refused management call as the user should read it: the server's
 * error_description, and for a missing scope the login command that asks for it
 * next to the scopes already held.
 */
export function managementFailure(response: HttpResponse, credential: CredentialDescription): CliError {
  const description = errorDescription(response);
  if (response.status === 403 && description.startsWith(MISSING_SCOPE)) {
    const scope = description.slice(MISSING_SCOPE.length).trim();
    if (credential.kind === "api_key") return new CliError(description, `SWITCHYARD_API_KEY lacks ${scope}: use a key minted with that scope`, 403);
    const scopes = [...credential.scopes.filter((held) => held !== scope), scope].join(" ");
    return new CliError(description, `sign in again with that scope added: switchyard login --scope "${scopes}"`, 403);
  }
  if (response.status === 401) {
    if (credential.kind === "api_key") return new CliError(`SWITCHYARD_API_KEY was refused: ${description}`, undefined, 401);
    return new CliError(description, LOGIN_HINT, 401);
  }
  return new CliError(description, undefined, response.status);
}
