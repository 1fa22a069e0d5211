import type { CodecContext, Encoded, IrContentPart, IrResponse, IrWarning } from "../../ir";
import { toGeminiUsage } from "./convert-usage";
import { toGeminiFinishReason } from "./map-finish-reason";
import { parseArgumentsObject } from "../shared/json-fields";
import { droppedOutput, invalidToolArguments, warnOnce } from "../shared/output-warnings";
import type { GeminiPart } from "./wire-types";
import { GroundingMetadataBuilder, utf8Length } from "./encode-grounding";

/** Anthropic's `redacted_thinking` is encrypted for Anthropic; Gemini has no part for it. */
export const REDACTED_REASONING = droppedOutput("redacted_reasoning", "redacted (encrypted) reasoning of another vendor has no Gemini form; not sent");

/**
 * IR content -> candidate parts. Reasoning is shown as a thought summary; only Gemini
 * signatures are attached. What has no part (redacted reasoning, media by URL only) is
 * dropped, and arguments that are not an object are sent as `{}`, with warnings.
 */
export function encodeGeminiResponseParts(content: IrContentPart[], warnings: IrWarning[]): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let carriedSignature: string | undefined;
  for (const part of content) {
    let encoded: GeminiPart | undefined;
    const googleSignature =
      part.type === "reasoning" && part.signatureProtocol === "google-generate-content" ? part.signature : undefined;
    if (part.type === "reasoning" && part.text === "") {
      // An empty signed reasoning part is a signature for the next part (see decode-content.ts).
      if (googleSignature !== undefined) carriedSignature = googleSignature;
      if (part.redactedData !== undefined) warnOnce(warnings, REDACTED_REASONING);
      continue;
    }
    if (part.type === "text" && part.text !== "") encoded = { text: part.text };
    else if (part.type === "reasoning") {
      encoded = { text: part.text, thought: true };
      if (googleSignature !== undefined) encoded.thoughtSignature = googleSignature;
    } else if (part.type === "tool_call") {
      let args = parseArgumentsObject(part.arguments);
      if (args === undefined) {
        warnOnce(warnings, invalidToolArguments(part.id));
        args = {};
      }
      encoded = { functionCall: { name: part.name, args } };
      if (part.signature !== undefined) encoded.thoughtSignature = part.signature;
    } else if (part.type === "image" || part.type === "file") {
      if (part.data !== undefined) encoded = { inlineData: { mimeType: part.mediaType ?? "application/octet-stream", data: part.data } };
      else warnOnce(warnings, droppedOutput(part.type, `Gemini answers carry ${part.type === "image" ? "images" : "files"} inline only; one given by URL was not sent`));
    }
    if (encoded === undefined) continue;
    if (carriedSignature !== undefined && encoded.thoughtSignature === undefined) encoded.thoughtSignature = carriedSignature;
    carriedSignature = undefined;
    parts.push(encoded);
  }
  return parts;
}

/** IR -> Gemini GenerateContentResponse for the client; citations and searches are the candidate's grounding (encode-grounding.ts). */
export function encodeGeminiResponse(response: IrResponse, context: CodecContext): Encoded<Record<string, unknown>> {
  const warnings: IrWarning[] = [];
  const candidate: Record<string, unknown> = {
    content: { role: "model", parts: encodeGeminiResponseParts(response.content, warnings) },
    finishReason: toGeminiFinishReason(response.finish),
    index: 0,
  };
  const grounding = new GroundingMetadataBuilder(warnings);
  let answerBytes = 0;
  for (const part of response.content) {
    if (part.type === "text") {
      grounding.addCitations(part.citations, part.text, answerBytes);
      answerBytes += utf8Length(part.text);
    } else if (part.type === "web_search") grounding.addSearch(part);
  }
  const metadata = grounding.build();
  if (metadata !== undefined) candidate.groundingMetadata = metadata;
  const body = {
    candidates: [candidate],
    usageMetadata: toGeminiUsage(response.usage),
    modelVersion: context.model,
    responseId: context.requestId,
  };
  return { value: body, warnings };
}
