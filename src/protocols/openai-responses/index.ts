import type { ProtocolCodec } from "../../ir";
import { decodeOpenAiError } from "../openai-shared/decode-openai-error";
import { encodeOpenAiError } from "../openai-shared/encode-openai-error";
import { decodeResponsesRequest } from "./decode-request";
import { decodeResponsesResponse } from "./decode-response";
import { createResponsesStreamDecoder } from "./decode-stream";
import { encodeResponsesRequest } from "./encode-request";
import { encodeResponsesResponse } from "./encode-response";
import { createResponsesStreamEncoder } from "./encode-stream";

/**
 * OpenAI Responses (`POST /v1/responses`), as client and as upstream protocol. Errors use
 * the same OpenAI envelope as chat completions.
 */
export const openaiResponsesCodec: ProtocolCodec = {
  id: "openai-responses",
  decodeRequest: decodeResponsesRequest,
  encodeRequest: encodeResponsesRequest,
  decodeResponse: decodeResponsesResponse,
  encodeResponse: encodeResponsesResponse,
  createStreamDecoder: createResponsesStreamDecoder,
  createStreamEncoder: createResponsesStreamEncoder,
  encodeError: encodeOpenAiError,
  decodeUpstreamError: (status, body, headers) => decodeOpenAiError(status, body, headers),
};

export { decodeResponseId, encodeResponseId } from "./response-id";
