import { CliError } from "./cli-error";
import { errorDescription, sendRequest } from "./http-client";

/** The built-in public client the server knows the CLI by. */
export const CLI_CLIENT_ID = "switchyard-cli";

/** The endpoints the CLI uses, as paths on SWITCHYARD_URL. */
export interface OauthEndpoints {
  deviceAuthorization: string;
  token: string;
  revocation: string | undefined;
}

/**
 * Reads the authorization server metadata (RFC 8414) at SWITCHYARD_URL. Only the path of
 * each endpoint is kept and called on SWITCHYARD_URL itself: tokens never leave for
 * another origin, and a server whose advertised public URL differs from the address the
 * CLI reaches it at (a proxy, a container port) still works.
 */
export async function discoverOauthEndpoints(server: string): Promise<OauthEndpoints> {
  const response = await sendRequest(server, { method: "GET", path: "/.well-known/oauth-authorization-server" });
  if (response.status !== 200) {
    throw new CliError(`the server at ${server} does not offer sign-in (GET /.well-known/oauth-authorization-server: ${errorDescription(response)})`);
  }
  const metadata = response.body as Record<string, unknown> | undefined;
  // A server mounted under a path (https://host/switchyard) advertises endpoints under that same path.
  const mountPath = new URL(server).pathname.replace(/\/+$/, "");
  const pathOf = (field: string): string | undefined => {
    const value = metadata?.[field];
    if (typeof value !== "string" || value === "") return undefined;
    try {
      const url = new URL(value, `${server}/`);
      const path = mountPath && url.pathname.startsWith(`${mountPath}/`) ? url.pathname.slice(mountPath.length) : url.pathname;
      return path + url.search;
    } catch {
      return undefined;
    }
  };
  const deviceAuthorization = pathOf("device_authorization_endpoint");
  const token = pathOf("token_endpoint");
  if (!deviceAuthorization || !token) {
    throw new CliError(`the server at ${server} does not advertise a device_authorization_endpoint and token_endpoint`);
  }
  return { deviceAuthorization, token, revocation: pathOf("revocation_endpoint") };
}
