import type { CodecContext, IrFinish, IrStreamPart, IrUsage, IrWarning, StreamEncoder } from "../../ir";
import { openAiErrorObject } from "../openai-shared/encode-openai-error";
import { droppedOutput, warnOnce } from "../shared/output-warnings";
import { REDACTED_REASONING } from "./encode-response";
import { encodeChatUsage } from "./convert-usage";
import { encodeChatFinishReason } from "./map-finish-reason";

const DONE = "data: [DONE]\n\n";

/**
 * IR stream parts -> client chat completion chunks. `role` rides
 * the first chunk whatever it carries; a tool call opens with `{index, id, type, function:
 * {name, arguments: ""}}`; the usage part is buffered and sent after the finish chunk as
 * OpenAI's usage-only chunk (`choices: []`) only when the client asked for it
 * (`stream_options.include_usage`). One JSON.stringify per frame, no post-processing.
 * Output after the finish chunk has no place in a chat stream and redacted reasoning no
 * form: both are dropped with a warning.
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

  function push(part: IrStreamPart): string {
    if (closed) return "";
    switch (part.type) {
      case "text_delta":
        if (part.text === "") return "";
        return finishSent ? late() : chunk({ content: part.text });
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
    closed = true;
    let out = finishSent ? "" : finishChunk({ reason: "stop" });
    if (options.includeUsage && usage !== undefined) {
      out += `data: ${JSON.stringify({ ...head, choices: [], usage: encodeChatUsage(usage) })}\n\n`;
    }
    return out + DONE;
  }

  return { push, end, warnings };
}
