import { describe, expect, test } from "bun:test";
import { ApiError, errorResponse, invalidClient } from "../../src/errors/api-error";
import { ERROR_TABLE } from "../../src/errors/error-table";
import { oauthErrorResponse } from "../../src/errors/oauth-error";

describe("OAuth errors and management errors share one status table", () => {
  test("an OAuth error is the table's bad_request, in the RFC 6749 §5.2 shape", async () => {
    const refused = oauthErrorResponse(new ApiError("invalid_grant", "unknown device code"));
    expect(refused.status).toBe(ERROR_TABLE.invalid_request.status);
    expect(refused.headers.get("cache-control")).toBe("no-store");
    expect(refused.headers.get("www-authenticate")).toBeNull();
    expect(await refused.json()).toEqual({ error: "invalid_grant", error_description: "unknown device code" });
  });

  test("a client that failed the Authorization header is the table's unauthorized, with a Basic challenge", async () => {
    const challenged = oauthErrorResponse(invalidClient("client authentication failed", true));
    const management = errorResponse(new ApiError("authentication", "missing or invalid credential"));
    expect(challenged.status).toBe(ERROR_TABLE.authentication.status);
    expect(management.status).toBe(ERROR_TABLE.authentication.status);
    expect(challenged.headers.get("www-authenticate")).toBe('Basic realm="switchyard"');
    expect(await challenged.json()).toEqual({ error: "invalid_client", error_description: "client authentication failed" });
    expect(await management.json()).toEqual({ error: "unauthorized", error_description: "missing or invalid credential" });
  });
});
