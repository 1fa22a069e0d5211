import type { CodecContext, IrCitation, IrFinish, IrStreamPart, IrUsage, IrWarning, StreamEncoder } from "../../ir";
import { openAiErrorObject } from "../openai-shared/encode-openai-error";
import { endsTextPart, placeCitations, CitedTextPart } from "../shared/citations";
import { droppedOutput, warnOnce } from "../shared/output-warnings";
import { chatAnnotation, REDACTED_REASONING, WEB_SEARCH } from "./encode-response";
import { encodeChatUsage } from "./convert-usage";
import { encodeChatFinishReason } from "./map-finish-reason";

const DONE = "data: [DONE]\n\n";

/**
 * IR stream parts -> client chat completion chunks. `role` rides
 * the first chunk whatever it carries; a tool call opens with `{index, id, type, function:
 * {name, arguments: ""}}`; the usage part is buffered and sent after the finish chunk as
 * OpenAI's usage-only chunk (`choices: []`) only when the client asked for it
 * (`stream_options.include_usage`). One JSON.stringify per frame, no post-processing.
 * Citations go out as `delta.annotations`, as OpenAI's search models stream them, with
 * spans into the whole `content`: a citation as soon as the text it spans has been sent, one
 * without a span (its part's whole text) when its part ends. Output after the finish chunk
 * has no place in a chat stream, and redacted reasoning and web searches no form: they are
 * dropped with a warning.
 */
export function createChatStreamEncoder(context: CodecContext, options: { includeUsage: boolean }): StreamEncoder {
  const head = { id: context.requestId, object: "chat.completion.chunk", created: context.created, model: context.model };
  let roleSent = false;
  let finishSent = false;
  let closed = false;
  let usage: IrUsage | undefined;
  /** IR tool index -> chat tool index, in order of opening. */
  const toolIndexes = new Map<number, number>();
  const warnings: IrWarning[] = [];
  /** Code units of `content` sent so far: citation spans are shifted by the text before their part. */
  let contentLength = 0;
  const textPart = new CitedTextPart();

  /** Output that arrives after the finish chunk was sent. */
  function late(): string {
    warnOnce(warnings, droppedOutput("after_finish", "output the upstream sent after its finish reason has no place in a chat stream; not sent"));
    return "";
  }

  function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
    if (!roleSent) {
      roleSent = true;
      delta = { role: "assistant", ...delta };
    }
    return `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  }

  function finishChunk(finish: IrFinish): string {
    finishSent = true;
    return chunk({}, encodeChatFinishReason(finish, toolIndexes.size > 0));
  }

  /** An annotations chunk for citations of the current text part. */
  function annotate(citations: IrCitation[]): string {
    const placed = placeCitations(citations, textPart.start, textPart.text, warnings);
    if (placed.length === 0) return "";
    return finishSent ? late() : chunk({ annotations: placed.map(chatAnnotation) });
  }

  function push(part: IrStreamPart): string {
    if (closed) return "";
    // The citations a text part still holds go out before whatever ends it (the finish chunk among them).
    return (endsTextPart(part) ? annotate(textPart.end()) : "") + write(part);
  }

  function write(part: IrStreamPart): string {
    switch (part.type) {
      case "text_delta":
        if (part.text === "") return "";
        if (finishSent) return late();
        textPart.addText(part.text, contentLength);
        contentLength += part.text.length;
        return chunk({ content: part.text });
      case "citation": {
        const ready = textPart.cite(part.citation, contentLength);
        return ready === undefined ? "" : annotate([ready]);
      }
      case "web_search":
        warnOnce(warnings, WEB_SEARCH);
        return "";
      case "reasoning_delta":
        if (part.text === "") return "";
        return finishSent ? late() : chunk({ reasoning_content: part.text });
      case "tool_call_start": {
        if (toolIndexes.has(part.index)) return "";
        if (finishSent) return late();
        const index = toolIndexes.size;
        toolIndexes.set(part.index, index);
        return chunk({
          tool_calls: [{ index, id: part.id, type: "function", function: { name: part.name, arguments: "" } }],
        });
      }
      case "tool_call_delta": {
        const index = toolIndexes.get(part.index);
        if (index === undefined || part.argumentsDelta === "") return "";
        if (finishSent) return late();
        return chunk({ tool_calls: [{ index, function: { arguments: part.argumentsDelta } }] });
      }
      case "usage":
        usage = part.usage;
        return "";
      case "finish":
        return finishSent ? "" : finishChunk(part.finish);
      case "redacted_reasoning":
        warnOnce(warnings, REDACTED_REASONING);
        return "";
      case "error":
        closed = true;
        return `data: ${JSON.stringify({ error: openAiErrorObject(part.error) })}\n\n${DONE}`;
      default:
        // start, tool_call_end, reasoning signatures: nothing to send on this wire.
        return "";
    }
  }

  function end(): string {
    if (closed) return "";
    let out = annotate(textPart.end());
    closed = true;
    out += finishSent ? "" : finishChunk({ reason: "stop" });
    if (options.includeUsage && usage !== undefined) {
      out += `data: ${JSON.stringify({ ...head, choices: [], usage: encodeChatUsage(usage) })}\n\n`;
    }
    return out + DONE;
  }

  return { push, end, warnings };
}
