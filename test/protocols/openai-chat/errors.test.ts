import { describe, expect, test } from "bun:test";
import { irError } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";
import { openaiResponsesCodec } from "../../../src/protocols/openai-responses";

describe("OpenAI error envelope (encodeError)", () => {
  test("renders message, type and code from the error table", () => {
    expect(openaiChatCodec.encodeError(irError("not_found", "model openai/gpt-9 not found"))).toEqual({
      status: 404,
      body: { error: { message: "model openai/gpt-9 not found", type: "not_found_error", code: "not_found" } },
      headers: {},
    });
  });

  test("adds WWW-Authenticate to a 401", () => {
    const { status, headers } = openaiChatCodec.encodeError(irError("authentication", "invalid API key"));
    expect(status).toBe(401);
    expect(headers).toEqual({ "WWW-Authenticate": 'Bearer realm="switchyard"' });
  });

  test("adds Retry-After to a 429 when the retry time is known", () => {
    expect(openaiChatCodec.encodeError(irError("upstream_rate_limited", "slow down", { retryAfter: 20 })).headers).toEqual({ "Retry-After": "20" });
    expect(openaiChatCodec.encodeError(irError("rate_limited", "slow down")).headers).toEqual({});
  });

  test("passes an upstream 400 error object through unchanged", () => {
    const upstreamError = { message: "Invalid 'messages[1].content': string too long.", type: "invalid_request_error", param: "messages[1].content", code: "string_above_max_length" };
    const encoded = openaiResponsesCodec.encodeError(irError("invalid_request", upstreamError.message, { upstreamError }));
    expect(encoded).toEqual({ status: 400, body: { error: upstreamError }, headers: {} });
  });

  test("reports an upstream 403 auth failure as a permission error with the upstream status", () => {
    const error = openaiChatCodec.decodeUpstreamError(403, { error: { message: "Country, region, or territory not supported", type: "request_forbidden", code: "unsupported_country_region_territory" } });
    expect(error).toMatchObject({ kind: "upstream_auth_required", status: 403 });
    expect(openaiChatCodec.encodeError(error).body).toEqual({
      error: { message: "Country, region, or territory not supported", type: "permission_error", code: "upstream_auth_required" },
    });
  });
});

describe("OpenAI upstream errors (decodeUpstreamError)", () => {
  test("maps a 429 rate limit with its Retry-After header", () => {
    const body = { error: { message: "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM)", type: "tokens", param: null, code: "rate_limit_exceeded" } };
    expect(openaiChatCodec.decodeUpstreamError(429, body, { "retry-after": "7" })).toMatchObject({ kind: "upstream_rate_limited", status: 429, retryAfter: 7 });
    expect(openaiChatCodec.decodeUpstreamError(429, body, { "retry-after-ms": "1500" }).retryAfter).toBe(2);
  });

  test("maps a 429 insufficient_quota to upstream payment required, not a rate limit", () => {
    const body = { error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } };
    expect(openaiChatCodec.decodeUpstreamError(429, body)).toMatchObject({ kind: "upstream_payment_required", status: 402 });
  });

  test("maps 5xx to a bad gateway without leaking the upstream message", () => {
    const error = openaiChatCodec.decodeUpstreamError(503, { error: { message: "The engine is currently overloaded", type: "server_error" } });
    expect(error).toEqual({ kind: "upstream_bad_gateway", status: 502, message: "upstream request failed" });
  });

  test("maps 401 and 402 to upstream auth and payment errors", () => {
    expect(openaiChatCodec.decodeUpstreamError(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } })).toMatchObject({
      kind: "upstream_auth_required",
      status: 401,
    });
    expect(openaiChatCodec.decodeUpstreamError(402, "Payment Required")).toMatchObject({ kind: "upstream_payment_required", status: 402, message: "Payment Required" });
  });

  test("maps 400, 404 and 422 to invalid_request carrying the upstream error", () => {
    for (const status of [400, 404, 422]) {
      const upstreamError = { message: `bad ${status}`, type: "invalid_request_error", param: null, code: null };
      expect(openaiChatCodec.decodeUpstreamError(status, { error: upstreamError })).toEqual({
        kind: "invalid_request",
        status: 400,
        message: `bad ${status}`,
        upstreamError,
      });
    }
  });

  test("maps a content policy rejection to upstream_policy_violation even though it is a 400", () => {
    const body = { error: { message: "Your request was rejected as a result of our safety system.", type: "invalid_request_error", code: "content_policy_violation" } };
    expect(openaiChatCodec.decodeUpstreamError(400, body)).toMatchObject({ kind: "upstream_policy_violation", status: 403 });
  });
});
