import type { IrError, ProtocolId } from "../ir";
import { sseData, sseEvent } from "../protocols/sse";
import { codecFor } from "../translation/codec-registry";

/**
 * A mid-stream failure of a passthrough stream, as the client protocol's terminal
 * error frame. Translated streams get theirs from the encoder,
 * which knows the stream's state; a passthrough has no encoder, so this builds the
 * frame from the protocol's error body.
 */
export function streamErrorFrame(protocol: ProtocolId, error: IrError, responseId: string, model: string): string {
  const body = codecFor(protocol).encodeError(error).body;
  switch (protocol) {
    case "openai-chat":
      return sseData(body) + sseData("[DONE]");
    case "anthropic-messages":
      return sseEvent("error", body);
    case "google-generate-content":
      return sseData(body);
    case "openai-responses": {
      const inner = (body as { error?: { code?: string; message?: string } }).error;
      return sseEvent("response.failed", {
        type: "response.failed",
        sequence_number: 999_999,
        response: { id: responseId, object: "response", model, status: "failed", output: [], error: { code: inner?.code ?? "upstream_error", message: inner?.message ?? error.message } },
      });
    }
  }
}
