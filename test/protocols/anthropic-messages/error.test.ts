import { describe, expect, test } from "bun:test";
import { irError } from "../../../src/ir";
import { anthropicMessagesCodec as codec } from "../../../src/protocols/anthropic-messages";
import { decodeAnthropicError } from "../../../src/protocols/anthropic-messages/error";
import { readJsonFixture } from "./stream-replay";

describe("anthropic-messages encodeError", () => {
  test("renders the Anthropic error envelope with the matching error type", () => {
    expect(codec.encodeError(irError("invalid_request", "messages must be an array"))).toEqual({
      status: 400,
      body: { type: "error", error: { type: "invalid_request_error", message: "messages must be an array" } },
      headers: {},
    });
    const type = (kind: Parameters<typeof irError>[0]) => (codec.encodeError(irError(kind, "m")).body.error as { type: string }).type;
    expect(type("upstream_unavailable")).toBe("overloaded_error");
    expect(type("upstream_bad_gateway")).toBe("api_error");
    expect(type("not_found")).toBe("not_found_error");
    expect(type("permission_denied")).toBe("permission_error");
    expect(type("payment_required")).toBe("billing_error");
    expect(type("upstream_timeout")).toBe("timeout_error");
  });

  test("a 401 carries WWW-Authenticate and a 429 carries Retry-After", () => {
    expect(codec.encodeError(irError("authentication", "missing key")).headers).toEqual({ "WWW-Authenticate": 'Bearer realm="switchyard"' });
    const limited = codec.encodeError(irError("rate_limited", "slow down", { retryAfter: 12.2 }));
    expect(limited.status).toBe(429);
    expect(limited.headers).toEqual({ "Retry-After": "13" });
  });

  test("an upstream auth failure with status 403 renders as permission_error", () => {
    const rendered = codec.encodeError(irError("upstream_auth_required", "forbidden", { status: 403 }));
    expect(rendered.status).toBe(403);
    expect((rendered.body.error as { type: string }).type).toBe("permission_error");
  });
});

describe("anthropic-messages decodeUpstreamError", () => {
  test("overloaded_error (529) becomes upstream_unavailable", () => {
    const error = codec.decodeUpstreamError(529, readJsonFixture("error-overloaded.json"));
    expect(error).toEqual({ kind: "upstream_unavailable", status: 503, message: "Overloaded" });
  });

  test("rate_limit_error becomes upstream_rate_limited with the retry-after header", () => {
    const error = codec.decodeUpstreamError(429, readJsonFixture("error-rate-limit.json"), { "Retry-After": "20" });
    expect(error.kind).toBe("upstream_rate_limited");
    expect(error.retryAfter).toBe(20);
  });

  test("invalid_request_error keeps the upstream error object for pass-through", () => {
    const error = codec.decodeUpstreamError(400, readJsonFixture("error-invalid-request.json"));
    expect(error.kind).toBe("invalid_request");
    expect(error.status).toBe(400);
    expect(error.upstreamError).toEqual({ type: "invalid_request_error", message: "messages.1.content.0.text: text content blocks must be non-empty" });
  });

  test("authentication and permission errors become upstream_auth_required with the upstream status", () => {
    const auth = codec.decodeUpstreamError(401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
    expect(auth).toMatchObject({ kind: "upstream_auth_required", status: 401 });
    const permission = codec.decodeUpstreamError(403, { type: "error", error: { type: "permission_error", message: "no access" } });
    expect(permission).toMatchObject({ kind: "upstream_auth_required", status: 403 });
  });

  test("api_error and unrecognised bodies become upstream_bad_gateway without leaking the upstream text", () => {
    const error = codec.decodeUpstreamError(500, { type: "error", error: { type: "api_error", message: "Internal server error" } });
    expect(error).toEqual({ kind: "upstream_bad_gateway", status: 502, message: "upstream request failed" });
    expect(codec.decodeUpstreamError(503, "<html>Service Unavailable</html>").kind).toBe("upstream_unavailable");
    expect(codec.decodeUpstreamError(504, undefined).kind).toBe("upstream_timeout");
  });

  test("an error type named by an Object.prototype member is unrecognised, decided by the status", () => {
    // A BYOK api_base is the customer's own server: its error bodies are input like any other.
    for (const type of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      const body = { type: "error", error: { type, message: "odd" } };
      expect({ type, error: codec.decodeUpstreamError(400, body) }).toEqual({ type, error: { kind: "invalid_request", status: 400, message: "odd", upstreamError: body.error } });
      // An `event: error` frame has no status: the type alone would set it.
      expect({ type, error: decodeAnthropicError(undefined, body) }).toEqual({ type, error: { kind: "upstream_bad_gateway", status: 502, message: "upstream request failed" } });
      expect(codec.encodeError(decodeAnthropicError(undefined, body)).status).toBe(502);
    }
  });
});
