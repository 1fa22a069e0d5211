import { type IrStreamPart, type IrWarning, type StreamDecoder } from "../../ir";
import { StreamEnding } from "../shared/stream-frame";
import type { SseEvent } from "../sse";
import { convertAnthropicUsage, mergeAnthropicUsage } from "./convert-usage";
import { decodeAnthropicError } from "./error";
import { mapAnthropicStopReason } from "./map-stop-reason";
import { isRecord, parseArgumentsObject, type JsonObject } from "../shared/json-fields";
import { warnDroppedUpstream } from "../shared/output-warnings";
import { TextPartCursor, type TextPosition } from "../shared/text-part-cursor";
import { readAnthropicCitation, webSearchOfToolUse, withWebSearchResult } from "./decode-citations";
import type { IrCitation, IrWebSearchPart } from "../../ir";
import { DeltaFrameShape, isDeltaPart } from "../shared/delta-frame-shape";

/** A text block whose citations wait for its end, which gives their span. */
interface CitedBlock {
  start: TextPosition;
  citations: IrCitation[];
}

/** The web search tool's `server_tool_use` block while its input streams in. */
interface SearchBlock {
  block: JsonObject;
  input: string;
}

/**
 * Anthropic Messages SSE -> IR stream parts (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
 * message_start, then content_block_start / _delta / _stop per block, message_delta
 * (stop_reason + cumulative usage), message_stop; `ping` is ignored and `error` frames
 * become error parts.
 *
 * The web search tool's `server_tool_use` block (its query streamed as `input_json_delta`)
 * becomes a web search part when its `web_search_tool_result` block arrives, whole, in its
 * `content_block_start`; a search still without a result when the message finishes is sent
 * then, with none. A text block's citations (on its start and in `citations_delta`s, ahead of
 * its text) are sent at the block's stop, with the block's span in the current text part:
 * consecutive text blocks are one text part in a stream, and Anthropic cites by block. Blocks
 * the IR has no place for (other server tools and their results, any other block type) are
 * named in `warnings` as the response decoder names them. A `content_block_delta` of the same
 * shape as the text, thinking or tool input delta before it is read without parsing
 * (delta-frame-shape.ts): such a delta changes nothing here but the text position (a web
 * search's input, which is kept, is not read by shape).
 */
export function createAnthropicStreamDecoder(options: { readShapes?: boolean } = {}): StreamDecoder {
  /** Content block index -> IR tool-call index, for tool_use blocks only. */
  const toolIndexByBlock = new Map<number, number>();
  let toolCount = 0;
  let usage: JsonObject | undefined;
  let stopReason: unknown;
  const stream = new StreamEnding();
  const warnings: IrWarning[] = [];
  const textPart = new TextPartCursor();
  /** Content block index -> a text block's citations so far. */
  const citedBlocks = new Map<number, CitedBlock>();
  /** Content block index -> a web search tool use whose input is streaming. */
  const searchBlocks = new Map<number, SearchBlock>();
  /** Tool use id -> a web search waiting for its result block, in answer order. */
  const awaitingResults = new Map<string, IrWebSearchPart>();
  /** `readShapes: false` parses every frame: what the shortcut is tested against. */
  const shape = options.readShapes === false ? undefined : new DeltaFrameShape();

  const emitUsage = (next: JsonObject, parts: IrStreamPart[]) => {
    usage = mergeAnthropicUsage(usage, next);
    parts.push({ type: "usage", usage: convertAnthropicUsage(usage) });
  };

  const finish = (parts: IrStreamPart[]) => {
    if (stream.finished) return;
    stream.finished = true;
    for (const index of [...citedBlocks.keys()]) sendCitations(index, parts);
    // A search Anthropic never answered (a paused turn, a cut-off message) still ran.
    for (const search of awaitingResults.values()) parts.push({ type: "web_search", search });
    awaitingResults.clear();
    parts.push({ type: "finish", finish: mapAnthropicStopReason(stopReason) });
  };

  const onBlockStart = (data: JsonObject, parts: IrStreamPart[]) => {
    const block = data.content_block;
    if (!isRecord(block) || typeof data.index !== "number") return;
    if (block.type === "text") {
      citedBlocks.set(data.index, { start: textPart.positionWith(parts), citations: [] });
      if (typeof block.text === "string" && block.text !== "") parts.push({ type: "text_delta", text: block.text });
      if (Array.isArray(block.citations)) for (const citation of block.citations) addCitation(data.index, citation);
    } else if (block.type === "server_tool_use" && block.name === "web_search" && typeof block.id === "string") {
      // Streams start it with `input: {}` and send the query in deltas; a pre-filled input is kept.
      const input = isRecord(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : "";
      searchBlocks.set(data.index, { block, input });
    } else if (block.type === "web_search_tool_result" && typeof block.tool_use_id === "string" && awaitingResults.has(block.tool_use_id)) {
      const search = awaitingResults.get(block.tool_use_id) as IrWebSearchPart;
      awaitingResults.delete(block.tool_use_id);
      parts.push({ type: "web_search", search: withWebSearchResult(search, block) });
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
        const search = typeof data.index === "number" ? searchBlocks.get(data.index) : undefined;
        if (search !== undefined && typeof delta.partial_json === "string") search.input += delta.partial_json;
        const index = typeof data.index === "number" ? toolIndexByBlock.get(data.index) : undefined;
        if (index !== undefined && typeof delta.partial_json === "string" && delta.partial_json !== "") {
          parts.push({ type: "tool_call_delta", index, argumentsDelta: delta.partial_json });
        }
        break;
      }
      case "citations_delta":
        if (typeof data.index === "number") addCitation(data.index, delta.citation);
        break;
      default:
        break;
    }
  };

  const addCitation = (blockIndex: number, raw: unknown) => {
    const block = citedBlocks.get(blockIndex);
    const citation = readAnthropicCitation(raw, warnings);
    if (citation === undefined) return;
    if (block === undefined) warnDroppedUpstream(warnings, "citations", "on a text block");
    else block.citations.push(citation);
  };

  /** A text block's citations, with the block's span in the current text part. */
  const sendCitations = (blockIndex: number, parts: IrStreamPart[]) => {
    const block = citedBlocks.get(blockIndex);
    if (block === undefined) return;
    citedBlocks.delete(blockIndex);
    const end = textPart.positionWith(parts);
    // The block's text is all in the current part unless another kind of part came between.
    const span = end.epoch === block.start.epoch ? { start: block.start.length, end: end.length } : {};
    for (const citation of block.citations) parts.push({ type: "citation", citation: { ...citation, ...span } });
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
        if (typeof data.index !== "number") break;
        const index = toolIndexByBlock.get(data.index);
        if (index !== undefined) parts.push({ type: "tool_call_end", index });
        sendCitations(data.index, parts);
        const search = searchBlocks.get(data.index);
        if (search !== undefined) {
          searchBlocks.delete(data.index);
          const parsed = search.input === "" ? {} : parseArgumentsObject(search.input);
          const part = webSearchOfToolUse(search.block, parsed);
          if (part !== undefined) awaitingResults.set(part.id, part);
        }
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
        stream.failed = true;
        parts.push({ type: "error", error: decodeAnthropicError(undefined, data) });
        break;
      default:
        break; // ping and future event types
    }
  };

  /** Parses the frame; a delta that did nothing else teaches the shape of the next. */
  const decodeAndLearn = (event: SseEvent): IrStreamPart[] => {
    shape?.forget();
    const frame = stream.parse(event.data, "upstream sent a malformed stream event");
    if (!frame.ok) return frame.parts;
    const data = frame.value;
    if (!isRecord(data)) return [];
    const parts: IrStreamPart[] = [];
    const warned = warnings.length;
    // The payload's `type` is authoritative; the `event:` line is the fallback.
    const type = data.type ?? event.event;
    onEvent(type, data, parts);
    const only = parts.length === 1 ? parts[0] : undefined;
    const keptInput = typeof data.index === "number" && searchBlocks.has(data.index);
    if (type === "content_block_delta" && isDeltaPart(only) && warnings.length === warned && !keptInput) shape?.learn(event, data, only);
    return parts;
  };

  return {
    push(event: SseEvent): IrStreamPart[] {
      if (stream.failed) return [];
      const delta = shape?.match(event);
      const parts = delta === undefined ? decodeAndLearn(event) : [delta];
      textPart.note(parts);
      return parts;
    },
    end: () => stream.end(),
    warnings,
  };
}
