import type { ProtocolId } from "../ir";

/**
 * Where a protocol's stream says it is over, as whole SSE frames: chat's `data: [DONE]`,
 * Messages' `message_stop`, Responses' `response.completed` / `.incomplete` / `.failed`.
 * A Gemini stream has no such frame: its end is the end of the body. Matched at a line's
 * start only, so answer text that says "[DONE]" (inside a JSON string) is not one.
 */
const TERMINAL_FRAME: Record<ProtocolId, RegExp | undefined> = {
  "openai-chat": /(?:^|\n)data: ?\[DONE\]/,
  "anthropic-messages": /(?:^|\n)(?:event: ?message_stop|data: ?\{"type": ?"message_stop")/,
  "openai-responses": /(?:^|\n)(?:event: ?response\.(?:completed|incomplete|failed)\b|data: ?\{"type": ?"response\.(?:completed|incomplete|failed)")/,
  "google-generate-content": undefined,
};

/** A literal every terminal frame contains, to skip the pattern on the many chunks without one. */
const CHEAP_PREFILTER: Record<ProtocolId, string | undefined> = {
  "openai-chat": "[DONE]",
  "anthropic-messages": "message_stop",
  "openai-responses": "response.",
  "google-generate-content": undefined,
};

/**
 * The index in `frames` (whole SSE frames in the client's protocol) where the frame that
 * ends the stream starts, or -1. The relay holds that frame and what follows back until
 * the request is settled (committed-stream.ts).
 */
export function terminalFrameAt(protocol: ProtocolId, frames: string): number {
  const literal = CHEAP_PREFILTER[protocol];
  if (literal === undefined || !frames.includes(literal)) return -1;
  const match = TERMINAL_FRAME[protocol]!.exec(frames);
  if (match === null) return -1;
  // The match may begin with the newline that ends the frame before it.
  return frames[match.index] === "\n" ? match.index + 1 : match.index;
}
