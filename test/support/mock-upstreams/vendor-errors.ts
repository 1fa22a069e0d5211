/**
 * Error envelopes, as each vendor documents them:
 * - OpenAI (chat and Responses): https://platform.openai.com/docs/guides/error-codes
 *   `{ error: { message, type, param, code } }`
 * - Anthropic: https://docs.anthropic.com/en/api/errors
 *   `{ type: "error", error: { type, message }, request_id }`
 * - Google: https://ai.google.dev/gemini-api/docs/troubleshooting (google.rpc.Status)
 *   `{ error: { code, message, status, details? } }`
 */
import { mockIds } from "./mock-ids";
import type { UpstreamProtocol } from "./mock-types";

export interface MockError {
  status: number;
  /** Replaces the vendor's stock message for this status. */
  message?: string;
  /** Seconds; sent as `Retry-After` (and as google.rpc.RetryInfo for Google). */
  retryAfter?: number;
  /** OpenAI `code` override, e.g. null for a missing key. */
  openaiCode?: string | null;
}

interface OpenaiErrorKind {
  type: string;
  code: string | null;
  message: string;
}

function openaiErrorKind(status: number): OpenaiErrorKind {
  switch (status) {
    case 401:
      return { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided: sk-mock****. You can find your API key at https://platform.openai.com/account/api-keys." };
    case 403:
      return { type: "invalid_request_error", code: "unsupported_country_region_territory", message: "Country, region, or territory not supported" };
    case 404:
      return { type: "invalid_request_error", code: "model_not_found", message: "The model does not exist or you do not have access to it." };
    case 429:
      return { type: "rate_limit_exceeded", code: "rate_limit_exceeded", message: "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s." };
    case 503:
      return { type: "server_error", code: null, message: "The engine is currently overloaded, please try again later." };
    default:
      return status >= 500
        ? { type: "server_error", code: null, message: "The server had an error while processing your request. Sorry about that!" }
        : { type: "invalid_request_error", code: null, message: "Invalid request." };
  }
}

const ANTHROPIC_ERROR_TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const ANTHROPIC_MESSAGES: Readonly<Record<string, string>> = {
  invalid_request_error: "Invalid request.",
  authentication_error: "invalid x-api-key",
  rate_limit_error: "Number of request tokens has exceeded your per-minute rate limit.",
  overloaded_error: "Overloaded",
  api_error: "Internal server error",
};

const GOOGLE_STATUSES: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

const GOOGLE_MESSAGES: Readonly<Record<string, string>> = {
  RESOURCE_EXHAUSTED: "Resource has been exhausted (e.g. check quota).",
  INTERNAL: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
  UNAVAILABLE: "The model is overloaded. Please try again later.",
  UNAUTHENTICATED: "API key not valid. Please pass a valid API key.",
  INVALID_ARGUMENT: "Request contains an invalid argument.",
};

export function openaiErrorBody(error: MockError): unknown {
  const kind = openaiErrorKind(error.status);
  const code = error.openaiCode === undefined ? kind.code : error.openaiCode;
  return { error: { message: error.message ?? kind.message, type: kind.type, param: null, code } };
}

export function anthropicErrorBody(error: MockError, requestId: string): unknown {
  const type = ANTHROPIC_ERROR_TYPES[error.status] ?? (error.status >= 500 ? "api_error" : "invalid_request_error");
  const message = error.message ?? ANTHROPIC_MESSAGES[type] ?? "Error";
  return { type: "error", error: { type, message }, request_id: requestId };
}

export function googleErrorBody(error: MockError): unknown {
  const status = GOOGLE_STATUSES[error.status] ?? (error.status >= 500 ? "UNAVAILABLE" : "INVALID_ARGUMENT");
  const details: unknown[] = [];
  if (status === "UNAUTHENTICATED") {
    details.push({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "API_KEY_INVALID",
      domain: "googleapis.com",
      metadata: { service: "generativelanguage.googleapis.com" },
    });
  }
  if (error.retryAfter !== undefined) {
    details.push({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${error.retryAfter}s` });
  }
  const body = { code: error.status, message: error.message ?? GOOGLE_MESSAGES[status] ?? "Error", status };
  return { error: details.length > 0 ? { ...body, details } : body };
}

/** The whole HTTP error response of `protocol`'s vendor, headers included. */
export function vendorErrorResponse(protocol: UpstreamProtocol, error: MockError): Response {
  const requestId = mockIds.requestId();
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (error.retryAfter !== undefined) headers["retry-after"] = String(error.retryAfter);
  let body: unknown;
  if (protocol === "anthropic-messages") {
    headers["request-id"] = requestId;
    body = anthropicErrorBody(error, requestId);
  } else if (protocol === "google-generate-content") {
    headers["content-type"] = "application/json; charset=UTF-8";
    body = googleErrorBody(error);
  } else {
    headers["x-request-id"] = requestId;
    body = openaiErrorBody(error);
  }
  return new Response(JSON.stringify(body), { status: error.status, headers });
}
