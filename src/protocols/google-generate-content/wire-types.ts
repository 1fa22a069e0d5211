/**
 * The Gemini `generateContent` wire shapes this codec writes (a subset of
 * https://ai.google.dev/api/generate-content). Decoders read untrusted JSON through
 * `../shared/json-fields.ts` instead of trusting these types.
 */
export interface GeminiPart {
  text?: string;
  /** Marks a thought summary (https://ai.google.dev/gemini-api/docs/thinking). */
  thought?: boolean;
  /** Opaque signature over the model's thinking; must be replayed on the part it came with. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { name: string; args: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
}

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiUsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

/** https://ai.google.dev/api/generate-content#FinishReason */
export type GeminiFinishReason =
  | "FINISH_REASON_UNSPECIFIED"
  | "STOP"
  | "MAX_TOKENS"
  | "SAFETY"
  | "RECITATION"
  | "LANGUAGE"
  | "OTHER"
  | "BLOCKLIST"
  | "PROHIBITED_CONTENT"
  | "SPII"
  | "MALFORMED_FUNCTION_CALL"
  | "IMAGE_SAFETY"
  | "IMAGE_PROHIBITED_CONTENT"
  | "UNEXPECTED_TOOL_CALL"
  | "TOO_MANY_TOOL_CALLS";
