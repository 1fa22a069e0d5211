import { describe, expect, test } from "bun:test";
import { irError } from "../../../src/ir";
import { googleGenerateContentCodec as codec } from "../../../src/protocols/google-generate-content";
import { readJsonFixture } from "./stream-replay";

describe("google-generate-content encodeError", () => {
  test("renders the Google error envelope with the RPC status name", () => {
    expect(codec.encodeError(irError("invalid_request", "contents must be an array"))).toEqual({
      status: 400,
      body: {
        error: {
          code: 400,
          message: "contents must be an array",
          status: "INVALID_ARGUMENT",
          details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "invalid_request", domain: "switchyard" }],
        },
      },
      headers: {},
    });
  });

  test("maps every status family to its Google name", () => {
    const status = (kind: Parameters<typeof irError>[0]) => (codec.encodeError(irError(kind, "m")).body.error as { status: string }).status;
    expect(status("authentication")).toBe("UNAUTHENTICATED");
    expect(status("payment_required")).toBe("FAILED_PRECONDITION");
    expect(status("permission_denied")).toBe("PERMISSION_DENIED");
    expect(status("not_found")).toBe("NOT_FOUND");
    expect(status("rate_limited")).toBe("RESOURCE_EXHAUSTED");
    expect(status("upstream_unavailable")).toBe("UNAVAILABLE");
    expect(status("upstream_timeout")).toBe("DEADLINE_EXCEEDED");
    expect(status("internal")).toBe("INTERNAL");
  });

  test("a 401 carries WWW-Authenticate and a 429 carries Retry-After", () => {
    expect(codec.encodeError(irError("authentication", "missing key")).headers).toEqual({ "WWW-Authenticate": 'Bearer realm="switchyard"' });
    expect(codec.encodeError(irError("upstream_rate_limited", "quota", { retryAfter: 37 })).headers).toEqual({ "Retry-After": "37" });
  });
});

describe("google-generate-content decodeUpstreamError", () => {
  test("RESOURCE_EXHAUSTED becomes upstream_rate_limited with the RetryInfo delay", () => {
    const error = codec.decodeUpstreamError(429, readJsonFixture("error-resource-exhausted.json"));
    expect(error).toMatchObject({ kind: "upstream_rate_limited", status: 429, retryAfter: 37 });
    expect(error.message).toStartWith("You exceeded your current quota");
  });

  test("a retry-after header wins over the body's delay", () => {
    expect(codec.decodeUpstreamError(429, readJsonFixture("error-resource-exhausted.json"), { "retry-after": "5" }).retryAfter).toBe(5);
  });

  test("INVALID_ARGUMENT becomes invalid_request carrying the upstream error", () => {
    const error = codec.decodeUpstreamError(400, readJsonFixture("error-invalid-argument.json"));
    expect(error.kind).toBe("invalid_request");
    expect(error.upstreamError).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
  });

  test("UNAVAILABLE, DEADLINE_EXCEEDED, PERMISSION_DENIED and INTERNAL map to their kinds", () => {
    const kind = (code: number, status: string) => codec.decodeUpstreamError(code, { error: { code, message: "m", status } });
    expect(kind(503, "UNAVAILABLE").kind).toBe("upstream_unavailable");
    expect(kind(504, "DEADLINE_EXCEEDED").kind).toBe("upstream_timeout");
    expect(kind(403, "PERMISSION_DENIED")).toMatchObject({ kind: "upstream_auth_required", status: 403 });
    expect(kind(500, "INTERNAL")).toEqual({ kind: "upstream_bad_gateway", status: 502, message: "upstream request failed" });
  });

  test("an array-wrapped error and a bare status are understood", () => {
    expect(codec.decodeUpstreamError(401, [{ error: { code: 401, message: "API key not valid", status: "UNAUTHENTICATED" } }])).toMatchObject({
      kind: "upstream_auth_required",
      status: 401,
      message: "API key not valid",
    });
    expect(codec.decodeUpstreamError(503, "").kind).toBe("upstream_unavailable");
  });

  test("a status named by an Object.prototype member is unrecognised, decided by the HTTP status", () => {
    // A BYOK api_base is the customer's own server: its error bodies are input like any other.
    for (const status of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      const error = codec.decodeUpstreamError(503, { error: { code: 503, message: "m", status } });
      expect({ status, kind: error.kind }).toEqual({ status, kind: "upstream_unavailable" });
      expect(codec.encodeError(error).status).toBe(503);
    }
  });
});
