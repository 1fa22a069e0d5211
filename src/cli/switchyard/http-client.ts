import { CliError } from "./cli-error";

const REQUEST_TIMEOUT_MS = 30_000;
const USER_AGENT = "switchyard-cli/0.1.0";

export interface HttpResponse {
  status: number;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  body: unknown;
  text: string;
}

export interface HttpRequest {
  method: "GET" | "POST" | "DELETE" | "PUT";
  /** A path on the server, with its query string: "/v1/namespaces/me/keys". */
  path: string;
  bearer?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded (the OAuth endpoints). */
  form?: Record<string, string>;
}

/**
 * One HTTP exchange with the server. Redirects are not followed, so a bearer token is
 * only ever sent to SWITCHYARD_URL; a server that cannot be reached is reported naming
 * SWITCHYARD_URL, since a wrong or unset value is the usual cause.
 */
export async function sendRequest(server: string, request: HttpRequest): Promise<HttpResponse> {
  const headers: Record<string, string> = { accept: "application/json", "user-agent": USER_AGENT };
  if (request.bearer !== undefined) headers.authorization = `Bearer ${request.bearer}`;
  let body: string | undefined;
  if (request.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(request.json);
  } else if (request.form !== undefined) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(request.form).toString();
  }
  let response: Response;
  try {
    response = await fetch(server + request.path, {
      method: request.method,
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw unreachable(server, error);
  }
  const text = await response.text();
  let parsed: unknown;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (response.status >= 300 && response.status < 400) {
    throw new CliError(`the server at ${server} answered ${request.path} with a redirect (HTTP ${response.status}); set SWITCHYARD_URL to the server's own address`);
  }
  return { status: response.status, body: parsed, text };
}

function unreachable(server: string, error: unknown): CliError {
  const code = (error as { code?: string } | null)?.code;
  const name = (error as { name?: string } | null)?.name;
  let reason: string;
  if (code === "ConnectionRefused" || code === "ECONNREFUSED") reason = "connection refused";
  else if (name === "TimeoutError") reason = `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  else reason = error instanceof Error ? error.message : String(error);
  return new CliError(
    `cannot reach the Switchyard server at ${server} (${reason})`,
    "set SWITCHYARD_URL to the server's address, e.g. SWITCHYARD_URL=https://switchyard.example.com",
  );
}

/** The `error_description` of a management or OAuth error body, else a status-only message. */
export function errorDescription(response: HttpResponse): string {
  const body = response.body as { error?: unknown; error_description?: unknown } | undefined;
  if (body && typeof body === "object") {
    if (typeof body.error_description === "string" && body.error_description) return body.error_description;
    if (typeof body.error === "string") return body.error;
    const nested = body.error as { message?: unknown } | undefined;
    if (nested && typeof nested === "object" && typeof nested.message === "string") return nested.message;
  }
  const excerpt = response.text.trim().slice(0, 200);
  return excerpt ? `HTTP ${response.status}: ${excerpt}` : `HTTP ${response.status}`;
}

/** The OAuth `error` code of a token-endpoint answer (RFC 6749 §5.2), if any. */
export function oauthErrorCode(response: HttpResponse): string | undefined {
  const body = response.body as { error?: unknown } | undefined;
  return body && typeof body === "object" && typeof body.error === "string" ? body.error : undefined;
}

/** `path` with the parameters that are set as its query string; the bare path when none is. */
export function withQuery(path: string, parameters: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.set(name, value);
  return query.size > 0 ? `${path}?${query}` : path;
}
