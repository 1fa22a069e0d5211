import type { CodecContext, IrFinish, IrStreamPart, IrUsage, IrWarning, StreamEncoder } from "../../ir";
import { sseData } from "../sse";
import { toGeminiUsage } from "./convert-usage";
import { REDACTED_REASONING } from "./encode-response";
import { googleErrorEnvelope } from "./error";
import { toGeminiFinishReason } from "./map-finish-reason";
import { parseArgumentsObject } from "../shared/json-fields";
import { invalidToolArguments, warnOnce } from "../shared/output-warnings";
import { endsTextPart, CitedTextPart } from "../shared/citations";
import { GroundingMetadataBuilder, utf8Length } from "./encode-grounding";
import type { GeminiPart } from "./wire-types";

interface BufferedCall {
  id: string;
  name: string;
  fragments: string[];
}

/**
 * IR stream parts -> Gemini SSE: one `data: {GenerateContentResponse}`
 * per text or thought delta; tool calls are buffered until complete and sent as one
 * functionCall part (Gemini never streams arguments); the final chunk carries
 * finishReason and usageMetadata. An error part becomes a `{"error":{…}}` chunk. Arguments
 * that are not a JSON object (a cut-off stream) and redacted reasoning, which has no Gemini
 * form, are reported as warnings. Citations and searches are gathered into the
 * groundingMetadata of the final chunk, where Gemini sends its own; a text part's citations
 * are placed when it ends, its text (and so each span's byte offsets) then known.
 */
export function createGeminiStreamEncoder(context: CodecContext): StreamEncoder {
  const calls = new Map<number, BufferedCall>();
  let usage: IrUsage | undefined;
  let finish: IrFinish | undefined;
  let done = false;
  const warnings: IrWarning[] = [];
  const grounding = new GroundingMetadataBuilder(warnings);
  const textPart = new CitedTextPart();
  /** UTF-8 bytes of answer text sent: grounding segments index the whole candidate text. */
  let answerBytes = 0;

  const chunk = (parts: GeminiPart[], extra: Record<string, unknown> = {}): string =>
    sseData({
      candidates: [{ content: { role: "model", parts }, ...extra, index: 0 }],
      modelVersion: context.model,
      responseId: context.requestId,
    });

  const flushCall = (index: number): string => {
    const call = calls.get(index);
    if (call === undefined) return "";
    calls.delete(index);
    // Unparseable arguments (a cut-off stream) still produce a call, with empty args.
    let args = parseArgumentsObject(call.fragments.join(""));
    if (args === undefined) {
      warnOnce(warnings, invalidToolArguments(call.id));
      args = {};
    }
    return chunk([{ functionCall: { name: call.name, args } }]);
  };

  const flushAllCalls = (): string => {
    let out = "";
    for (const index of [...calls.keys()].sort((a, b) => a - b)) out += flushCall(index);
    return out;
  };

  const onPart = (part: IrStreamPart): string => {
    switch (part.type) {
      case "text_delta":
        if (part.text === "") return "";
        textPart.addText(part.text, answerBytes);
        answerBytes += utf8Length(part.text);
        return chunk([{ text: part.text }]);
      case "citation":
        textPart.cite(part.citation, answerBytes, () => false);
        return "";
      case "web_search":
        grounding.addSearch(part.search);
        return "";
      case "reasoning_delta":
        return part.text === "" ? "" : chunk([{ text: part.text, thought: true }]);
      case "tool_call_start":
        calls.set(part.index, { id: part.id, name: part.name, fragments: [] });
        return "";
      case "tool_call_delta":
        calls.get(part.index)?.fragments.push(part.argumentsDelta);
        return "";
      case "tool_call_end":
        return flushCall(part.index);
      case "usage":
        usage = part.usage;
        return "";
      case "finish":
        finish = part.finish;
        return "";
      case "error":
        done = true;
        return sseData(googleErrorEnvelope(part.error));
      case "redacted_reasoning":
        warnOnce(warnings, REDACTED_REASONING);
        return "";
      default:
        // start has no frame; another vendor's reasoning signature is not content (shared/output-warnings.ts).
        return "";
    }
  };

  return {
    push(part: IrStreamPart): string {
      if (done) return "";
      if (endsTextPart(part)) grounding.addCitations(textPart.end(), textPart.text, textPart.start);
      return onPart(part);
    },
    end(): string {
      if (done) return "";
      done = true;
      grounding.addCitations(textPart.end(), textPart.text, textPart.start);
      const out = flushAllCalls();
      const candidate: Record<string, unknown> = { content: { role: "model", parts: [] }, finishReason: toGeminiFinishReason(finish), index: 0 };
      const metadata = grounding.build();
      if (metadata !== undefined) candidate.groundingMetadata = metadata;
      return (
        out +
        sseData({
          candidates: [candidate],
          usageMetadata: toGeminiUsage(usage),
          modelVersion: context.model,
          responseId: context.requestId,
        })
      );
    },
    warnings,
  };
}
