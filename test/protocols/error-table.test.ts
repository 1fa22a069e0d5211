import { describe, expect, test } from "bun:test";
import { ERROR_TABLE, IR_ERROR_KINDS } from "../../src/errors/error-table";
import { irError, type ProtocolId } from "../../src/ir";
import { codecFor } from "../../src/translation/codec-registry";

const PROTOCOLS: ProtocolId[] = ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"];
const KINDS = IR_ERROR_KINDS;

/** The protocol's name for the error's type: OpenAI `error.type`, Anthropic `error.type`, Google `error.status`. */
function typeName(protocol: ProtocolId, body: Record<string, unknown>): unknown {
  const error = body.error as Record<string, unknown>;
  return protocol === "google-generate-content" ? error.status : error.type;
}

describe("the inference error table", () => {
  test("every kind renders in every protocol with the table's status and a type name of the protocol's own", () => {
    for (const protocol of PROTOCOLS) {
      for (const kind of KINDS) {
        const rendered = codecFor(protocol).encodeError(irError(kind, "m"));
        expect({ protocol, kind, status: rendered.status }).toEqual({ protocol, kind, status: ERROR_TABLE[kind].status });
        expect({ protocol, kind, type: typeof typeName(protocol, rendered.body) }).toEqual({ protocol, kind, type: "string" });
      }
    }
  });

  test("an upstream auth failure keeps the upstream's 401 or 403 in every protocol, a 403 rendered as a permission error", () => {
    for (const protocol of PROTOCOLS) {
      const codec = codecFor(protocol);
      const forbidden = codec.encodeError(irError("upstream_auth_required", "m", { status: 403 }));
      expect({ protocol, status: forbidden.status }).toEqual({ protocol, status: 403 });
      expect(typeName(protocol, forbidden.body)).toBe(typeName(protocol, codec.encodeError(irError("permission_denied", "m")).body));
      expect({ protocol, status: codec.encodeError(irError("upstream_auth_required", "m")).status }).toEqual({ protocol, status: 401 });
    }
  });

  test("a caller cannot choose a status the table does not give the kind", () => {
    // @ts-expect-error 503 is not a status of "internal": temporary unavailability is its own kind.
    expect(() => irError("internal", "m", { status: 503 })).toThrow(TypeError);
    // @ts-expect-error 408 is not a status of "invalid_request": a stalled client is its own kind.
    expect(() => irError("invalid_request", "m", { status: 408 })).toThrow(TypeError);
    // @ts-expect-error an upstream auth failure is a 401 or a 403, nothing else.
    expect(() => irError("upstream_auth_required", "m", { status: 400 })).toThrow(TypeError);
  });

  test("service_unavailable is our own retryable 503, named on the wire as internal errors are", () => {
    const error = irError("service_unavailable", "the server is shutting down; retry the request", { retryAfter: 1 });
    expect(codecFor("openai-chat").encodeError(error)).toEqual({
      status: 503,
      body: { error: { message: "the server is shutting down; retry the request", type: "internal_error", code: "internal_error" } },
      headers: { "Retry-After": "1" },
    });
    expect(codecFor("anthropic-messages").encodeError(error).body).toEqual({ type: "error", error: { type: "api_error", message: "the server is shutting down; retry the request" } });
    expect(codecFor("google-generate-content").encodeError(error).body).toMatchObject({ error: { code: 503, status: "INTERNAL", details: [{ reason: "internal_error" }] } });
  });

  test("client_timeout is a 408 named on the wire as an invalid request", () => {
    const error = irError("client_timeout", "the client read nothing for 30000 ms; the stream was ended");
    expect(codecFor("openai-responses").encodeError(error)).toEqual({
      status: 408,
      body: { error: { message: "the client read nothing for 30000 ms; the stream was ended", type: "invalid_request_error", code: "invalid_request" } },
      headers: {},
    });
    expect(codecFor("anthropic-messages").encodeError(error).body).toMatchObject({ error: { type: "invalid_request_error" } });
    expect(codecFor("google-generate-content").encodeError(error).body).toMatchObject({ error: { code: 408, status: "INVALID_ARGUMENT", details: [{ reason: "invalid_request" }] } });
  });
});
