import { IrDecodeError, type IrContentPart, type IrFinish, type IrResponse, type IrTextPart, type IrWarning } from "../../ir";
import { placeSupport, readGrounding, utf8Length, type Grounding } from "./decode-grounding";
import { convertGeminiUsage } from "./convert-usage";
import { mapGeminiFinishReason } from "./map-finish-reason";
import { isRecord, type JsonObject } from "../shared/json-fields";
import { responseCallId } from "./response-call-id";
import { warnDroppedUpstream } from "../shared/output-warnings";

/** A part's fields that qualify its data rather than being data (https://ai.google.dev/api/caching#Part). */
const PART_METADATA: ReadonlySet<string> = new Set(["thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution"]);

/**
 * What a candidate carries beside its content that the IR has no place for
 * (https://ai.google.dev/api/generate-content#candidate): the URLs the URL context tool read
 * (`urlContextMetadata`), the sources of recited text (`citationMetadata`). Its
 * `groundingMetadata` is read (decode-grounding.ts).
 */
const CANDIDATE_METADATA = ["urlContextMetadata", "citationMetadata"] as const;

/**
 * One candidate part -> IR content; `callIndex` numbers the function calls of the response
 * from 0. A part with data the IR has no place for (`executableCode`, `codeExecutionResult`:
 * the code execution tool Google ran) is named in `warnings` by its data field.
 */
export function decodeGeminiResponsePart(part: JsonObject, responseId: string | undefined, callIndex: number, warnings: IrWarning[]): IrContentPart[] {
  const signature = typeof part.thoughtSignature === "string" ? part.thoughtSignature : undefined;
  const signed = signature === undefined ? {} : { signature, signatureProtocol: "google-generate-content" as const };
  if (typeof part.text === "string") {
    if (part.thought === true) return [{ type: "reasoning", text: part.text, ...signed }];
    const parts: IrContentPart[] = [];
    if (signature !== undefined) parts.push({ type: "reasoning", text: "", ...signed });
    if (part.text !== "") parts.push({ type: "text", text: part.text });
    return parts;
  }
  const call = part.functionCall;
  if (isRecord(call) && typeof call.name === "string") {
    const id = typeof call.id === "string" && call.id !== "" ? call.id : responseCallId(responseId, callIndex);
    const toolCall: IrContentPart = { type: "tool_call", id, name: call.name, arguments: JSON.stringify(call.args ?? {}) };
    if (signature !== undefined) toolCall.signature = signature;
    return [toolCall];
  }
  if (isRecord(part.inlineData) && typeof part.inlineData.mimeType === "string" && typeof part.inlineData.data === "string") {
    const { mimeType, data } = part.inlineData;
    return [mimeType.startsWith("image/") ? { type: "image", mediaType: mimeType, data } : { type: "file", mediaType: mimeType, data }];
  }
  for (const key in part) {
    if (!PART_METADATA.has(key)) {
      warnDroppedUpstream(warnings, key, "part");
      break;
    }
  }
  return [];
}

/** Names in `warnings` the candidate's metadata the IR has no place for (CANDIDATE_METADATA). */
export function warnDroppedCandidateMetadata(candidate: JsonObject, warnings: IrWarning[]): void {
  for (const key of CANDIDATE_METADATA) if (isRecord(candidate[key])) warnDroppedUpstream(warnings, key, "of a candidate");
}

/**
 * The finish of a response with no candidate: prompt blocked (`promptFeedback.blockReason`,
 * https://ai.google.dev/api/generate-content#PromptFeedback) -> content_filter.
 */
export function promptBlockFinish(body: JsonObject): IrFinish | undefined {
  const feedback = body.promptFeedback;
  if (!isRecord(feedback) || typeof feedback.blockReason !== "string") return undefined;
  return { reason: "content_filter", raw: feedback.blockReason };
}

interface GroundedText {
  partIndex: number;
  part: IrTextPart;
}

/**
 * Puts a grounding in the answer: each citation on the text part it supports (by the
 * segment's `partIndex`, else by its offset in the candidate's whole text), and the search
 * before the first text part, since the model searched before it wrote.
 */
function addGrounding(grounding: Grounding, content: IrContentPart[], texts: readonly GroundedText[], warnings: IrWarning[]): void {
  for (const support of grounding.supports) {
    let target: GroundedText | undefined;
    let startByte = support.startByte;
    if (support.partIndex !== undefined) target = texts.find((text) => text.partIndex === support.partIndex);
    else {
      for (const text of texts) {
        target = text;
        const bytes = utf8Length(text.part.text);
        if (startByte < bytes) break;
        startByte -= bytes;
      }
    }
    if (target === undefined) {
      warnDroppedUpstream(warnings, "groundingSupports", "of the grounding metadata");
      continue;
    }
    const local = { ...support, startByte, endByte: support.endByte === undefined ? undefined : support.endByte - (support.startByte - startByte) };
    (target.part.citations ??= []).push(placeSupport(local, target.part.text));
  }
  if (grounding.search === undefined) return;
  const firstText = content.findIndex((part) => part.type === "text");
  content.splice(firstText < 0 ? content.length : firstText, 0, grounding.search);
}

/** Gemini GenerateContentResponse -> IR. Only the first candidate is read. */
export function decodeGeminiResponse(body: unknown): IrResponse {
  if (!isRecord(body) || (!Array.isArray(body.candidates) && !isRecord(body.promptFeedback) && !isRecord(body.usageMetadata))) {
    throw new IrDecodeError("upstream response is not a Gemini GenerateContentResponse");
  }
  const responseId = typeof body.responseId === "string" ? body.responseId : undefined;
  const candidate = Array.isArray(body.candidates) && isRecord(body.candidates[0]) ? body.candidates[0] : undefined;
  const content: IrContentPart[] = [];
  const warnings: IrWarning[] = [];
  let callIndex = 0;
  /** The text parts, by the index of the candidate part they came from. */
  const texts: GroundedText[] = [];
  const parts = isRecord(candidate?.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
  parts.forEach((part: unknown, partIndex: number) => {
    if (!isRecord(part)) return;
    const decoded = decodeGeminiResponsePart(part, responseId, callIndex, warnings);
    if (decoded.some((item) => item.type === "tool_call")) callIndex++;
    for (const item of decoded) if (item.type === "text") texts.push({ partIndex, part: item });
    content.push(...decoded);
  });
  if (candidate !== undefined) {
    warnDroppedCandidateMetadata(candidate, warnings);
    if (isRecord(candidate.groundingMetadata)) addGrounding(readGrounding(candidate.groundingMetadata, responseId, warnings), content, texts, warnings);
  }
  const hasFunctionCall = content.some((part) => part.type === "tool_call");
  const finishReason = typeof candidate?.finishReason === "string" ? candidate.finishReason : undefined;
  const finish =
    finishReason !== undefined
      ? mapGeminiFinishReason(finishReason, hasFunctionCall)
      : (promptBlockFinish(body) ?? { reason: hasFunctionCall ? "tool_calls" : "other" });
  const response: IrResponse = { content, finish };
  if (responseId !== undefined) response.id = responseId;
  if (typeof body.modelVersion === "string") response.model = body.modelVersion;
  if (isRecord(body.usageMetadata)) response.usage = convertGeminiUsage(body.usageMetadata);
  if (warnings.length > 0) response.warnings = warnings;
  return response;
}
