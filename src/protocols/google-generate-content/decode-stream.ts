import { type IrStreamPart, type IrWarning, type IrWebSearchPart, type StreamDecoder } from "../../ir";
import { StreamEnding } from "../shared/stream-frame";
import type { SseEvent } from "../sse";
import { convertGeminiUsage } from "./convert-usage";
import { decodeGeminiResponsePart, promptBlockFinish, warnDroppedCandidateMetadata } from "./decode-response";
import { decodeGeminiError } from "./error";
import { mapGeminiFinishReason } from "./map-finish-reason";
import { isRecord, type JsonObject } from "../shared/json-fields";
import { warnDroppedUpstream } from "../shared/output-warnings";
import { TextPartCursor } from "../shared/text-part-cursor";
import { placeSupport, readGrounding, type Grounding } from "./decode-grounding";

/**
 * Gemini `streamGenerateContent?alt=sse` -> IR stream parts. Every `data:` line is a whole
 * GenerateContentResponse (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent):
 * text and thought parts are deltas, a functionCall arrives complete (start + delta + end
 * at once, with a synthesised id), usageMetadata is cumulative, and finishReason ends the
 * turn. A trailing `data: [DONE]` (some proxies) is tolerated.
 *
 * Grounding usually comes on the last chunk, after the text: its supports become citation
 * parts of the current text part (Gemini counts their UTF-8 byte offsets in the candidate's
 * whole text, which may have begun before it), each sent once however many chunks repeat
 * it; its search becomes a web search part, after the citations, sent with the finish.
 * Parts and candidate metadata the IR has no place for (code execution, URL context,
 * recitation sources) are named in `warnings` as the response decoder names them.
 *
 * Thought signatures are not emitted: no client stream encoder can use a Gemini signature
 * (a Gemini client's own stream is relayed byte for byte).
 */
export function createGeminiStreamDecoder(): StreamDecoder {
  let started = false;
  let callCount = 0;
  let sawFunctionCall = false;
  const stream = new StreamEnding();
  let responseId: string | undefined;
  const warnings: IrWarning[] = [];
  const textPart = new TextPartCursor();
  /** The candidate's text so far, which grounding offsets count in. */
  let candidateText = "";
  const citedSupports = new Set<string>();
  let search: IrWebSearchPart | undefined;
  let searchSent = false;

  /** Citation parts for the supports not sent yet, placed in the current text part. */
  const onGrounding = (grounding: Grounding, parts: IrStreamPart[]) => {
    const pending = pendingText(parts);
    const text = candidateText + pending;
    // Where the candidate's text begins in the current text part (negative: before it).
    const shift = textPart.positionWith(parts).length - text.length;
    for (const support of grounding.supports) {
      const key = `${support.chunkIndex}:${support.partIndex ?? ""}:${support.startByte}:${support.endByte ?? ""}`;
      if (citedSupports.has(key)) continue;
      citedSupports.add(key);
      const citation = placeSupport(support, text, shift);
      if (citation.start !== undefined && citation.start < 0) {
        // It supports text of an earlier part, which a stream cannot cite any more.
        warnDroppedUpstream(warnings, "groundingSupports", "of the grounding metadata");
        continue;
      }
      parts.push({ type: "citation", citation });
    }
    if (grounding.search !== undefined) search = grounding.search;
  };

  const sendSearch = (parts: IrStreamPart[]) => {
    if (search === undefined || searchSent) return;
    searchSent = true;
    parts.push({ type: "web_search", search });
  };

  const onChunk = (chunk: JsonObject, parts: IrStreamPart[]) => {
    if (isRecord(chunk.error)) {
      stream.failed = true;
      parts.push({ type: "error", error: decodeGeminiError(undefined, chunk) });
      return;
    }
    if (typeof chunk.responseId === "string") responseId ??= chunk.responseId;
    if (!started) {
      started = true;
      const start: IrStreamPart = { type: "start" };
      if (responseId !== undefined) start.id = responseId;
      if (typeof chunk.modelVersion === "string") start.model = chunk.modelVersion;
      parts.push(start);
    }
    const candidate = Array.isArray(chunk.candidates) && isRecord(chunk.candidates[0]) ? chunk.candidates[0] : undefined;
    const content = isRecord(candidate?.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const wirePart of content) {
      if (!isRecord(wirePart)) continue;
      for (const part of decodeGeminiResponsePart(wirePart, responseId, callCount, warnings)) {
        if (part.type === "text") parts.push({ type: "text_delta", text: part.text });
        else if (part.type === "reasoning" && part.text !== "") parts.push({ type: "reasoning_delta", text: part.text });
        else if (part.type === "tool_call") {
          const index = callCount++;
          sawFunctionCall = true;
          parts.push(
            { type: "tool_call_start", index, id: part.id, name: part.name },
            { type: "tool_call_delta", index, argumentsDelta: part.arguments },
            { type: "tool_call_end", index },
          );
        }
      }
    }
    if (candidate !== undefined) {
      warnDroppedCandidateMetadata(candidate, warnings);
      if (isRecord(candidate.groundingMetadata)) onGrounding(readGrounding(candidate.groundingMetadata, responseId, warnings), parts);
    }
    if (isRecord(chunk.usageMetadata)) parts.push({ type: "usage", usage: convertGeminiUsage(chunk.usageMetadata) });
    const finishReason = typeof candidate?.finishReason === "string" ? candidate.finishReason : undefined;
    const finish = finishReason !== undefined ? mapGeminiFinishReason(finishReason, sawFunctionCall) : promptBlockFinish(chunk);
    if (finish !== undefined && !stream.finished) {
      stream.finished = true;
      sendSearch(parts);
      parts.push({ type: "finish", finish });
    } else if (stream.finished) sendSearch(parts); // grounding after the finish chunk
  };

  return {
    push(event: SseEvent): IrStreamPart[] {
      if (stream.failed || event.data === "[DONE]") return [];
      const frame = stream.parse(event.data, "upstream sent a malformed stream chunk");
      if (!frame.ok) return frame.parts;
      const data = frame.value;
      const parts: IrStreamPart[] = [];
      // Some gateways wrap the chunk in a one-element array (the non-SSE JSON array form).
      const chunk = Array.isArray(data) ? data[0] : data;
      if (isRecord(chunk)) onChunk(chunk, parts);
      textPart.note(parts);
      candidateText += pendingText(parts);
      return parts;
    },
    end: () => stream.end(),
    warnings,
  };
}

/** The text of the text parts in `parts`: all of it is the candidate's. */
function pendingText(parts: readonly IrStreamPart[]): string {
  let text = "";
  for (const part of parts) if (part.type === "text_delta") text += part.text;
  return text;
}
