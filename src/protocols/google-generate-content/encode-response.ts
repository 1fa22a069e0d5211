import type { CodecContext, IrContentPart, IrResponse } from "../../ir";
import { toGeminiUsage } from "./convert-usage";
import { toGeminiFinishReason } from "./map-finish-reason";
import { parseArgumentsObject } from "../shared/json-fields";
import type { GeminiPart } from "./wire-types";

/** IR content -> candidate parts. Reasoning is shown as a thought summary; only Gemini signatures are attached. */
export function encodeGeminiResponseParts(content: IrContentPart[]): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let carriedSignature: string | undefined;
  for (const part of content) {
    let encoded: GeminiPart | undefined;
    const googleSignature =
      part.type === "reasoning" && part.signatureProtocol === "google-generate-content" ? part.signature : undefined;
    if (part.type === "reasoning" && part.text === "") {
      // An empty signed reasoning part is a signature for the next part (see decode-content.ts).
      if (googleSignature !== undefined) carriedSignature = googleSignature;
      continue;
    }
    if (part.type === "text" && part.text !== "") encoded = { text: part.text };
    else if (part.type === "reasoning") {
      encoded = { text: part.text, thought: true };
      if (googleSignature !== undefined) encoded.thoughtSignature = googleSignature;
    } else if (part.type === "tool_call") {
      encoded = { functionCall: { name: part.name, args: parseArgumentsObject(part.arguments) ?? {} } };
      if (part.signature !== undefined) encoded.thoughtSignature = part.signature;
    } else if ((part.type === "image" || part.type === "file") && part.data !== undefined) {
      encoded = { inlineData: { mimeType: part.mediaType ?? "application/octet-stream", data: part.data } };
    }
    if (encoded === undefined) continue;
    if (carriedSignature !== undefined && encoded.thoughtSignature === undefined) encoded.thoughtSignature = carriedSignature;
    carriedSignature = undefined;
    parts.push(encoded);
  }
  return parts;
}

/** IR -> Gemini GenerateContentResponse for the client. */
export function encodeGeminiResponse(response: IrResponse, context: CodecContext): Record<string, unknown> {
  return {
    candidates: [
      {
        content: { role: "model", parts: encodeGeminiResponseParts(response.content) },
        finishReason: toGeminiFinishReason(response.finish),
        index: 0,
      },
    ],
    usageMetadata: toGeminiUsage(response.usage),
    modelVersion: context.model,
    responseId: context.requestId,
  };
}
