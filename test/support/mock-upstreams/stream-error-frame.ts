/**
 * The frame each vendor sends when a stream fails after it has started (the HTTP status
 * was already 200, so the error travels in the body):
 * - OpenAI chat: a `data:` line carrying the error envelope, and the stream ends.
 *   https://platform.openai.com/docs/guides/error-codes
 * - OpenAI Responses: `response.failed`, the response object with `status: "failed"` and
 *   its `error`. https://platform.openai.com/docs/api-reference/responses-streaming/response/failed
 * - Anthropic: `event: error` with the error envelope (e.g. `overloaded_error`).
 *   https://docs.anthropic.com/en/docs/build-with-claude/streaming#error-events
 * - Google: a chunk that is a google.rpc.Status `{ error: { code, message, status } }`.
 */
import type { UpstreamProtocol } from "./mock-types";
import { googleErrorBody, openaiErrorBody } from "./vendor-errors";
import { sseData, sseEvent } from "./sse-frames";

/** An overload, the failure vendors most often report mid-stream. */
const STATUS = { openai: 500, anthropic: 529, google: 503 } as const;

/**
 * @param sent the frames already sent (the Responses frame reuses the response object of
 *   `response.created` and continues its sequence numbers).
 */
export function streamErrorFrame(protocol: UpstreamProtocol, sent: readonly string[], jsonArray = false): string {
  switch (protocol) {
    case "openai-chat":
      return sseData(openaiErrorBody({ status: STATUS.openai }));
    case "anthropic-messages":
      return sseEvent("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    case "google-generate-content": {
      const body = googleErrorBody({ status: STATUS.google });
      if (!jsonArray) return sseData(body, "\r\n");
      return `${sent.length === 0 ? "[" : ",\r\n"}${JSON.stringify(body)}`;
    }
    case "openai-responses": {
      const created = sentPayload(sent[0]);
      const inner = (openaiErrorBody({ status: STATUS.openai }) as { error: { message: string } }).error;
      const response = { ...(created.response as Record<string, unknown>), status: "failed", error: { code: "server_error", message: inner.message } };
      return sseEvent("response.failed", { type: "response.failed", sequence_number: sent.length, response });
    }
  }
}

function sentPayload(frame: string | undefined): Record<string, unknown> {
  const data = frame?.split("\n").find((line) => line.startsWith("data: "));
  if (data === undefined) throw new Error("the stream has no first frame to continue");
  return JSON.parse(data.slice("data: ".length)) as Record<string, unknown>;
}
