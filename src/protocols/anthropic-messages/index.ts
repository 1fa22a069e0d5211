import type { ProtocolCodec } from "../../ir";
import { decodeAnthropicRequest } from "./decode-request";
import { decodeAnthropicResponse } from "./decode-response";
import { createAnthropicStreamDecoder } from "./decode-stream";
import { encodeAnthropicRequest } from "./encode-request";
import { encodeAnthropicResponse } from "./encode-response";
import { createAnthropicStreamEncoder } from "./encode-stream";
import { decodeAnthropicError, encodeAnthropicError } from "./error";

/**
 * The Anthropic Messages wire (`POST /v1/messages`), both as the client
 * protocol and as an upstream. Pure: no I/O, no clock, no randomness.
 */
export const anthropicMessagesCodec: ProtocolCodec = {
  id: "anthropic-messages",
  decodeRequest: decodeAnthropicRequest,
  encodeRequest: encodeAnthropicRequest,
  decodeResponse: decodeAnthropicResponse,
  encodeResponse: encodeAnthropicResponse,
  createStreamDecoder: createAnthropicStreamDecoder,
  // Anthropic streams always carry usage, so `includeUsage` changes nothing on this wire.
  createStreamEncoder: (context) => createAnthropicStreamEncoder(context),
  encodeError: encodeAnthropicError,
  decodeUpstreamError: (status, body, headers) => decodeAnthropicError(status, body, headers),
};
