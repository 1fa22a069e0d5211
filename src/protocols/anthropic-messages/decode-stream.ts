import { type IrStreamPart, type IrWarning, type StreamDecoder } from "../../ir";
import { invalidStream, parseStreamFrame } from "../shared/stream-frame";
import type { SseEvent } from "../sse";
import { convertAnthropicUsage, mergeAnthropicUsage } from "./convert-usage";
import { decodeAnthropicError } from "./error";
import { mapAnthropicStopReason } from "./map-stop-reason";
import { isRecord, type JsonObject } from "../shared/json-fields";
import { warnDroppedUpstream } from "../shared/output-warnings";

/**
 * Anthropic Messages SSE -> IR stream parts (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
 * message_start, then content_block_start / _delta / _stop per block, message_delta
 * (stop_reason + cumulative usage), message_stop; `ping` is ignored and `error` frames
 * become error parts. Blocks the IR has no place for (server tools and their results, any
 * other block type) and citations (on a text block's start or in a `citations_delta`) are
 * named in `warnings` as the response decoder names them.
 */
export function createAnthropicStreamDecoder(): StreamDecoder {
  /** Content block index -> IR tool-call index, for tool_use blocks only. */
  const toolIndexByBlock = new Map<number, number>();
  let toolCount = 0;
  let usage: JsonObject | undefined;
  let stopReason: unknown;
  let finished = false;
  let failed = false;
  const warnings: IrWarning[] = [];

  const emitUsage = (next: JsonObject, parts: IrStreamPart[]) => {
    usage = mergeAnthropicUsage(usage, next);
    parts.push({ type: "usage", usage: convertAnthropicUsage(usage) });
  };

  const finish = (parts: IrStreamPart[]) => {
    if (finished) return;
    finished = true;
    parts.push({ type: "finish", finish: mapAnthropicStopReason(stopReason) });
  };

  const onBlockStart = (data: JsonObject, parts: IrStreamPart[]) => {
    const block = data.content_block;
    if (!isRecord(block) || typeof data.index !== "number") return;
    if (block.type === "text") {
      if (typeof block.text === "string" && block.text !== "") parts.push({ type: "text_delta", text: block.text });
      if (Array.isArray(block.citations) && block.citations.length > 0) warnDroppedUpstream(warnings, "citations", "on a text block");
    } else if (block.type === "thinking" && typeof block.thinking === "string" && block.thinking !== "") {
      parts.push({ type: "reasoning_delta", text: block.thinking });
    } else if (block.type === "redacted_thinking" && typeof block.data === "string") {
      parts.push({ type: "redacted_reasoning", data: block.data, protocol: "anthropic-messages" });
    } else if (block.type === "tool_use" && typeof block.id === "string" && typeof block.name === "string") {
      const index = toolCount++;
      toolIndexByBlock.set(data.index, index);
      parts.push({ type: "tool_call_start", index, id: block.id, name: block.name });
      // Streams start tool_use with `input: {}` and send the JSON in deltas; a pre-filled input is kept.
      if (isRecord(block.input) && Object.keys(block.input).length > 0) {
        parts.push({ type: "tool_call_delta", index, argumentsDelta: JSON.stringify(block.input) });
      }
    } else if (block.type !== "thinking" && block.type !== "redacted_thinking" && block.type !== "tool_use") {
      // Server tools Anthropic ran and their results; their input_json_delta events find no tool call and are skipped.
      warnDroppedUpstream(warnings, block.type, "content block");
    }
  };

  const onBlockDelta = (data: JsonObject, parts: IrStreamPart[]) => {
    const delta = data.delta;
    if (!isRecord(delta)) return;
    switch (delta.type) {
      case "text_delta":
        if (typeof delta.text === "string" && delta.text !== "") parts.push({ type: "text_delta", text: delta.text });
        break;
      case "thinking_delta":
        if (typeof delta.thinking === "string" && delta.thinking !== "") parts.push({ type: "reasoning_delta", text: delta.thinking });
        break;
      case "signature_delta":
        if (typeof delta.signature === "string") parts.push({ type: "reasoning_signature", signature: delta.signature, protocol: "anthropic-messages" });
        break;
      case "input_json_delta": {
        const index = typeof data.index === "number" ? toolIndexByBlock.get(data.index) : undefined;
        if (index !== undefined && typeof delta.partial_json === "string" && delta.partial_json !== "") {
          parts.push({ type: "tool_call_delta", index, argumentsDelta: delta.partial_json });
        }
        break;
      }
      case "citations_delta":
        warnDroppedUpstream(warnings, "citations", "on a text block");
        break;
      default:
        break;
    }
  };

  const onEvent = (type: unknown, data: JsonObject, parts: IrStreamPart[]) => {
    switch (type) {
      case "message_start": {
        const message = isRecord(data.message) ? data.message : {};
        const start: IrStreamPart = { type: "start" };
        if (typeof message.id === "string") start.id = message.id;
        if (typeof message.model === "string") start.model = message.model;
        parts.push(start);
        if (isRecord(message.usage)) emitUsage(message.usage, parts);
        break;
      }
      case "content_block_start":
        onBlockStart(data, parts);
        break;
      case "content_block_delta":
        onBlockDelta(data, parts);
        break;
      case "content_block_stop": {
        const index = typeof data.index === "number" ? toolIndexByBlock.get(data.index) : undefined;
        if (index !== undefined) parts.push({ type: "tool_call_end", index });
        break;
      }
      case "message_delta": {
        if (isRecord(data.usage)) emitUsage(data.usage, parts);
        const delta = isRecord(data.delta) ? data.delta : {};
        if (typeof delta.stop_reason === "string") {
          stopReason = delta.stop_reason;
          finish(parts);
        }
        break;
      }
      case "message_stop":
        finish(parts);
        break;
      case "error":
        failed = true;
        parts.push({ type: "error", error: decodeAnthropicError(undefined, data) });
        break;
      default:
        break; // ping and future event types
    }
  };

  return {
    push(event: SseEvent): IrStreamPart[] {
      if (failed) return [];
      const frame = parseStreamFrame(event.data, "upstream sent a malformed stream event");
      if (!frame.ok) {
        failed = true;
        return frame.parts;
      }
      const data = frame.value;
      if (!isRecord(data)) return [];
      const parts: IrStreamPart[] = [];
      // The payload's `type` is authoritative; the `event:` line is the fallback.
      onEvent(data.type ?? event.event, data, parts);
      return parts;
    },
    end(): IrStreamPart[] {
      if (finished || failed) return [];
      failed = true;
      return invalidStream("stream ended early");
    },
    warnings,
  };
}
