import type { ProtocolCodec } from "../../ir";
import { decodeOpenAiError } from "../openai-shared/decode-openai-error";
import { encodeOpenAiError } from "../openai-shared/encode-openai-error";
import { decodeChatRequest } from "./decode-request";
import { decodeChatResponse } from "./decode-response";
import { createChatStreamDecoder } from "./decode-stream";
import { encodeChatRequest } from "./encode-request";
import { encodeChatResponse } from "./encode-response";
import { createChatStreamEncoder } from "./encode-stream";
import { usageCostFields, usageCostSplice, usageFrameAt, withUsageCost } from "./with-usage-cost";
import { dropUnrequestedUsage } from "./drop-unrequested-usage";

/** OpenAI chat completions (`POST /v1/chat/completions`), both as client and as upstream protocol. */
export const openaiChatCodec: ProtocolCodec = {
  id: "openai-chat",
  decodeRequest: decodeChatRequest,
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  encodeResponse: encodeChatResponse,
  createStreamDecoder: createChatStreamDecoder,
  createStreamEncoder: createChatStreamEncoder,
  encodeError: encodeOpenAiError,
  decodeUpstreamError: (status, body, headers) => decodeOpenAiError(status, body, headers),
  addCharge: withUsageCost,
  chargeSplice: usageCostSplice,
  chargeFields: usageCostFields,
  usageFrameAt,
  dropUnrequestedUsage,
};
