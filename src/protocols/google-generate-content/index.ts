import type { ProtocolCodec } from "../../ir";
import { decodeGeminiRequest } from "./decode-request";
import { decodeGeminiResponse } from "./decode-response";
import { createGeminiStreamDecoder } from "./decode-stream";
import { encodeGeminiRequest } from "./encode-request";
import { encodeGeminiResponse } from "./encode-response";
import { createGeminiStreamEncoder } from "./encode-stream";
import { decodeGeminiError, encodeGeminiError } from "./error";

/**
 * The Gemini generateContent wire (`/v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent`), as client protocol and as upstream.
 * Pure: no I/O, no clock, no randomness.
 */
export const googleGenerateContentCodec: ProtocolCodec = {
  id: "google-generate-content",
  decodeRequest: decodeGeminiRequest,
  encodeRequest: encodeGeminiRequest,
  decodeResponse: decodeGeminiResponse,
  encodeResponse: encodeGeminiResponse,
  createStreamDecoder: createGeminiStreamDecoder,
  // Gemini streams always end with usageMetadata, so `includeUsage` changes nothing on this wire.
  createStreamEncoder: (context) => createGeminiStreamEncoder(context),
  encodeError: encodeGeminiError,
  decodeUpstreamError: (status, body, headers) => decodeGeminiError(status, body, headers),
};
