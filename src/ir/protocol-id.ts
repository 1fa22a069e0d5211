/** The four wire protocols Switchyard speaks, on both sides (client and upstream). */
export const PROTOCOL_IDS = [
  "openai-chat",
  "openai-responses",
  "anthropic-messages",
  "google-generate-content",
] as const;

export type ProtocolId = (typeof PROTOCOL_IDS)[number];
