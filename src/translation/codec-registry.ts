import type { ProtocolCodec, ProtocolId } from "../ir";
import { openaiChatCodec } from "../protocols/openai-chat";
import { openaiResponsesCodec } from "../protocols/openai-responses";
import { anthropicMessagesCodec } from "../protocols/anthropic-messages";
import { googleGenerateContentCodec } from "../protocols/google-generate-content";

const CODECS: Record<ProtocolId, ProtocolCodec> = {
  "openai-chat": openaiChatCodec,
  "openai-responses": openaiResponsesCodec,
  "anthropic-messages": anthropicMessagesCodec,
  "google-generate-content": googleGenerateContentCodec,
};

export function codecFor(protocol: ProtocolId): ProtocolCodec {
  return CODECS[protocol];
}
