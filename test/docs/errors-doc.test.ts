import { describe, expect, test } from "bun:test";
import { ERROR_TABLE, IR_ERROR_KINDS, type OauthErrorCode } from "../../src/errors/error-table";
import { irError, type IrErrorKind } from "../../src/ir/ir-error";
import { toAnthropicErrorType } from "../../src/protocols/anthropic-messages/error";
import { toGoogleStatus } from "../../src/protocols/google-generate-content/error";
import { readRepositoryFile } from "./markdown";

/**
 * docs/errors.md lists every error code with its status and names, and they are the ones
 * the error table (src/errors/error-table.ts) gives: the inference kinds with each
 * protocol's rendering, the management codes, and the OAuth codes.
 */
const DOC = readRepositoryFile("docs/errors.md");

/** The rows of the Markdown table under `## <heading>`, cells trimmed, backticks dropped. */
function tableRows(heading: string): string[][] {
  const section = DOC.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  if (!section) throw new Error(`docs/errors.md has no "## ${heading}"`);
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => line.slice(1, -1).split(" | ").map((cell) => cell.trim().replaceAll("`", "")));
}

/** Each management code with its kind's status, in the table's order. */
const MANAGEMENT_ERROR_STATUS = Object.values(ERROR_TABLE).flatMap((row) => ("management" in row ? [[row.management, row.status]] : []));

/** Every OAuth code; `satisfies` makes the type checker reject a missing or unknown one. */
const OAUTH_CODES = {
  invalid_request: true,
  invalid_client: true,
  invalid_grant: true,
  unauthorized_client: true,
  unsupported_grant_type: true,
  invalid_scope: true,
  authorization_pending: true,
  slow_down: true,
  access_denied: true,
  expired_token: true,
} as const satisfies Record<OauthErrorCode, true>;

describe("docs/errors.md", () => {
  test("lists every inference error kind once, with the table's status, code and type and each protocol's name", () => {
    const rows = tableRows("Inference errors");
    expect(rows.map((row) => row[0]).sort()).toEqual([...IR_ERROR_KINDS].sort());
    for (const [kind, status, code, type, anthropicType, googleStatus, advice] of rows) {
      const row = ERROR_TABLE[kind as IrErrorKind];
      const error = irError(kind as IrErrorKind, "documented");
      const documented = { kind, status: Number.parseInt(status!, 10), code, type, anthropicType, googleStatus };
      expect(documented).toEqual({ kind, status: row.status, code: row.code, type: row.type, anthropicType: toAnthropicErrorType(error), googleStatus: toGoogleStatus(error) });
      // A kind that keeps other upstream statuses names them.
      for (const other of Object.keys("alsoStatus" in row ? row.alsoStatus : {})) expect({ kind, status }).toEqual({ kind, status: expect.stringContaining(other) });
      expect({ kind, advice: (advice ?? "").length > 20 }).toEqual({ kind, advice: true });
    }
  });

  test("lists every management error code once, with the table's status", () => {
    const rows = tableRows("Management API errors");
    expect(rows.map(([code, status]) => [code, Number(status)])).toEqual(MANAGEMENT_ERROR_STATUS);
  });

  test("lists every OAuth error code once", () => {
    const rows = tableRows("OAuth errors");
    expect(rows.map((row) => row[0]).sort()).toEqual(Object.keys(OAUTH_CODES).sort());
  });
});
