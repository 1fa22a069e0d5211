import { ApiError } from "../../errors/api-error";

/** Longest value any OAuth parameter may have; every real one is far shorter. */
const MAX_VALUE_LENGTH = 4096;

/**
 * The parameters of an OAuth endpoint's request body: `application/x-www-form-urlencoded`
 * as the RFCs require, or a JSON object of strings as a convenience. A parameter sent
 * twice, a value that is not a string, and text PostgreSQL could not store are refused
 * (RFC 6749 §3.2: "parameters MUST NOT be included more than once"). Empty values count
 * as absent (RFC 6749 §3.1).
 */
export function parseOauthParams(text: string, contentType: string | null): Map<string, string> {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  const params = new Map<string, string>();
  const add = (name: string, value: string) => {
    if (params.has(name)) throw new ApiError("invalid_request", `parameter ${name} is repeated`);
    if (value.length > MAX_VALUE_LENGTH) throw new ApiError("invalid_request", `parameter ${name} is too long`);
    if (/[\u0000]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value)) {
      throw new ApiError("invalid_request", `parameter ${name} holds characters that are not allowed`);
    }
    if (value !== "") params.set(name, value);
  };
  if (text.trim() === "") return params;
  if (type === "application/json" || type.endsWith("+json")) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError("invalid_request", "request body is not valid JSON");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ApiError("invalid_request", "request body must be a JSON object");
    for (const [name, value] of Object.entries(body)) {
      if (typeof value !== "string") throw new ApiError("invalid_request", `parameter ${name} must be a string`);
      add(name, value);
    }
    return params;
  }
  if (type !== "application/x-www-form-urlencoded") {
    throw new ApiError("invalid_request", "send the parameters as application/x-www-form-urlencoded");
  }
  for (const [name, value] of new URLSearchParams(text)) add(name, value);
  return params;
}

/** A required parameter, or `invalid_request` naming it. */
export function requireParam(params: Map<string, string>, name: string): string {
  const value = params.get(name);
  if (value === undefined) throw new ApiError("invalid_request", `missing parameter: ${name}`);
  return value;
}
