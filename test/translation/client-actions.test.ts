import { describe, expect, test } from "bun:test";
import type { ProtocolId } from "../../src/ir";
import { translateResponse } from "../../src/translation/translate-response";
import { readFixture } from "./support/expectations";
import { runStream, STREAM_CONTEXT } from "./support/stream-harness";

/**
 * An answer that asks the client to take an action its protocol cannot express (a
 * Responses `local_shell_call`, an unanswered `mcp_approval_request`) is refused for a
 * client of another protocol, with a warning naming it, never delivered as an empty
 * success; a Responses client gets it relayed as it is. Recorded OpenAI traffic
 * (test/fixtures/openai-responses/SOURCES.md).
 */
const OTHER_CLIENTS: ProtocolId[] = ["openai-chat", "anthropic-messages", "google-generate-content"];
const whole = (body: string, client: ProtocolId) => translateResponse({ upstream: "openai-responses", client, body, context: STREAM_CONTEXT });

describe("whole answers", () => {
  for (const [fixture, action] of [
    ["response-local-shell.json", "local_shell_call"],
    ["response-mcp-approval-pending.json", "mcp_approval_request"],
  ] as const) {
    test(`${action}: refused for every other client protocol, relayed to a Responses client`, () => {
      const body = readFixture("openai-responses", fixture);
      for (const client of OTHER_CLIENTS) {
        const translated = whole(body, client);
        expect(translated.signals.refused).toMatchObject({ kind: "upstream_invalid_response", message: expect.stringContaining(action) });
        expect(translated.warnings).toContainEqual(expect.objectContaining({ code: "unsupported_client_action", field: `output.${action}` }));
        // Its usage still counts: the request is charged for it.
        expect(translated.signals.usageFrames).toHaveLength(1);
      }
      const relayed = whole(body, "openai-responses");
      expect(relayed.signals.refused).toBeUndefined();
      expect(relayed.body).toContain(action);
    });
  }

  test("an approval already followed by its mcp_call is not an action left to the client: the answer is delivered", () => {
    const body = readFixture("openai-responses", "response-mcp-approval-answered.json");
    for (const client of OTHER_CLIENTS) {
      const translated = whole(body, client);
      expect(translated.signals.refused).toBeUndefined();
      expect(translated.body).toContain("Japan issues mega-quake advisory");
    }
  });
});

describe("streams", () => {
  const text = readFixture("openai-responses", "stream-local-shell.sse");
  for (const client of OTHER_CLIENTS) {
    test(`local_shell_call → ${client}: refused once, in whatever pieces the stream arrives`, () => {
      for (const seed of [1, 2, 3]) {
        const run = runStream({ upstream: "openai-responses", client, passthrough: false, clientAskedUsage: false }, text, seed, 12);
        const refusals = run.outputs.filter((output) => output.signals.refused !== undefined);
        expect(refusals).toHaveLength(1);
        expect(refusals[0]!.signals.refused).toMatchObject({ kind: "upstream_invalid_response", message: expect.stringContaining("local_shell_call") });
        expect(run.outputs.flatMap((output) => output.warnings ?? [])).toContainEqual(expect.objectContaining({ code: "unsupported_client_action" }));
      }
    });
  }

  test("a Responses client's passthrough relays it, refusing nothing", () => {
    const run = runStream({ upstream: "openai-responses", client: "openai-responses", passthrough: true, clientAskedUsage: false }, text, 7, 12);
    expect(run.outputs.some((output) => output.signals.refused !== undefined)).toBe(false);
  });
});
