import { CliError } from "./cli-error";

export const DEFAULT_SERVER_URL = "http://localhost:8080";

/** SWITCHYARD_URL as given (without trailing slashes), or undefined when unset. */
export function configuredServerUrl(env: Record<string, string | undefined>): string | undefined {
  const raw = env.SWITCHYARD_URL?.trim();
  if (!raw) return undefined;
  return normalizeServerUrl(raw);
}

/** An absolute http(s) URL without trailing slashes; anything else is refused naming SWITCHYARD_URL. */
export function normalizeServerUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`SWITCHYARD_URL is not a URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError(`SWITCHYARD_URL must be an http or https URL, not ${url.protocol}`);
  if (url.username || url.password) throw new CliError("SWITCHYARD_URL must not carry credentials");
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}
