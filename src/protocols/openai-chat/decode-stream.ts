import { type IrFinish, type IrStreamPart, type IrWarning, type StreamDecoder } from "../../ir";
import { StreamEnding } from "../shared/stream-frame";
import type { SseEvent } from "../sse";
import { decodeOpenAiStreamError } from "../openai-shared/decode-openai-error";
import { appendArguments, openIfNamed, type PendingToolCall } from "../openai-shared/pending-tool-call";
import { isRecord, type JsonObject } from "../openai-shared/read-fields";
import { decodeChatUsage } from "./convert-usage";
import { placeCitation } from "../openai-shared/url-citation";
import { TextPartCursor } from "../shared/text-part-cursor";
import { DeltaFrameShape, isDeltaPart, KnownShapes, type IgnoredField } from "../shared/delta-frame-shape";
import { readAnnotations, readAnswerContent, warnDroppedMessageFields } from "./decode-answer-content";
import { decodeChatFinishReason } from "./map-finish-reason";

/**
 * Chat completion chunks -> IR stream parts. Handles what real upstreams
 * send: `usage: null` on every chunk and a trailing usage-only chunk with `choices: []`
 * (OpenAI with `stream_options.include_usage`), usage inline on the finish chunk (several
 * compatible providers — the usage must not be lost there), tool-call fragments keyed by
 * `index` with the id only on the first fragment and `name: ""` on continuations, and
 * `reasoning_content` deltas (DeepSeek), and `content` as an array of `thinking` and `text`
 * parts (Mistral: decode-answer-content.ts, which names any other part type in `warnings`,
 * as it names Groq's `executed_tools` and annotations other than `url_citation`).
 * A delta's `url_citation` annotations become citation parts; they index the message's
 * text, so their spans are moved to the current text part (which starts later when
 * reasoning came between).
 * A tool call opens only once its name is known. A frame of the same shape as the delta
 * before it (text, reasoning, or argument text of an open tool call), or as a text or
 * reasoning chunk of an earlier stream, is read without parsing (delta-frame-shape.ts):
 * such a delta changes nothing here but the text counts that `push` keeps.
 */
export function createChatStreamDecoder(options: { readShapes?: boolean } = {}): StreamDecoder {
  let started = false;
  const stream = new StreamEnding();
  let done = false;
  let refusal = false;
  const toolCalls = new Map<number, PendingToolCall>();
  const warnings: IrWarning[] = [];
  const textPart = new TextPartCursor();
  /** The message's text emitted so far, which annotation indices count in. */
  let messageText = 0;
  /** The chunk decodeEvent last parsed (a shape is proven against it). */
  let parsedChunk: unknown;
  /** Tool-call fragments read: one may change a call's state without giving a part. */
  let toolFragments = 0;

  /** `readShapes: false` parses every frame: what the shortcut is tested against. */
  const shape = options.readShapes === false ? undefined : new DeltaFrameShape(UNREAD_FIELDS, KNOWN_SHAPES);

  function push(event: SseEvent): IrStreamPart[] {
    // Once started (and not over), a text or reasoning chunk gives its part and nothing
    // else: a shape known from another stream may stand for it. Before, the first chunk's
    // id and model make the start part.
    const delta = shape?.match(event, started && !done && !stream.failed);
    const parts: IrStreamPart[] = delta === undefined ? decodeAndLearn(event) : [delta];
    textPart.note(parts);
    messageText += textLength(parts);
    return parts;
  }

  /** Parses the frame; one that gave a delta and did nothing else teaches the shape of the next. */
  function decodeAndLearn(event: SseEvent): IrStreamPart[] {
    const warned = warnings.length;
    const fragments = toolFragments;
    const refused = refusal;
    const parts = decodeEvent(event);
    const only = parts.length === 1 ? parts[0] : undefined;
    // Argument text from one fragment: a lone delta comes only from a call already open (a
    // fragment to a closed call is kept, or opens it with a start part before its text).
    const fragmentsRead = toolFragments - fragments;
    const deltaOnly = isDeltaPart(only) && warnings.length === warned && fragmentsRead === (only.type === "tool_call_delta" ? 1 : 0);
    // Its shape may stand for other streams' chunks only if the chunk did nothing in any
    // state: a refusal's text marks the answer refused, and a warning is named once a
    // stream, so a stream that has one may have been spared its repeat by this chunk.
    if (deltaOnly) shape?.learn(event, parsedChunk, only, !refused && !refusal && warned === 0);
    else shape?.forget();
    return parts;
  }

  function decodeEvent(event: SseEvent): IrStreamPart[] {
    parsedChunk = undefined;
    if (done || stream.failed) return [];
    if (event.data === "[DONE]") {
      done = true;
      return stream.finished ? [] : finishParts({ reason: "stop" });
    }
    const frame = stream.parse(event.data, "upstream sent a stream frame that is not JSON");
    if (!frame.ok) return frame.parts;
    const chunk = frame.value;
    parsedChunk = chunk;
    if (!isRecord(chunk)) return [];
    if (chunk.error !== undefined && chunk.error !== null) {
      stream.failed = true;
      return [{ type: "error", error: decodeOpenAiStreamError(chunk) }];
    }
    const parts: IrStreamPart[] = [];
    if (!started) {
      started = true;
      const start: IrStreamPart = { type: "start" };
      if (typeof chunk.id === "string") start.id = chunk.id;
      if (typeof chunk.model === "string") start.model = chunk.model;
      parts.push(start);
    }
    const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (isRecord(choice)) {
      if (isRecord(choice.delta)) decodeDelta(choice.delta, parts);
      if (typeof choice.finish_reason === "string" && !stream.finished) parts.push(...finishParts(decodeChatFinishReason(choice.finish_reason)));
    }
    // Usage may ride a usage-only chunk or the finish chunk itself: read it wherever it is.
    const usage = decodeChatUsage(chunk.usage);
    if (usage !== undefined) parts.push({ type: "usage", usage });
    return parts;
  }

  function decodeDelta(delta: JsonObject, parts: IrStreamPart[]): void {
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") parts.push({ type: "reasoning_delta", text: reasoning });
    if (typeof delta.content === "string") {
      if (delta.content !== "") parts.push({ type: "text_delta", text: delta.content });
    } else if (Array.isArray(delta.content)) {
      for (const piece of readAnswerContent(delta.content, warnings)) {
        parts.push(piece.kind === "text" ? { type: "text_delta", text: piece.text } : { type: "reasoning_delta", text: piece.text });
      }
    }
    const citations = readAnnotations(delta, warnings);
    if (citations.length > 0) {
      // Where the message's text begins in the current text part (negative: before it).
      const shift = textPart.positionWith(parts).length - (messageText + textLength(parts));
      for (const citation of citations) parts.push({ type: "citation", citation: placeCitation(citation, shift, Infinity) });
    }
    warnDroppedMessageFields(delta, warnings);
    if (typeof delta.refusal === "string" && delta.refusal !== "") {
      refusal = true;
      parts.push({ type: "text_delta", text: delta.refusal });
    }
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((fragment: unknown, position: number) => {
        if (isRecord(fragment)) decodeToolFragment(fragment, position, parts);
      });
    }
  }

  function decodeToolFragment(fragment: JsonObject, position: number, parts: IrStreamPart[]): void {
    // `index` is documented as required; fall back to the position for providers that omit it.
    toolFragments++;
    const key = typeof fragment.index === "number" ? fragment.index : position;
    let call = toolCalls.get(key);
    if (call === undefined) {
      call = { index: toolCalls.size, buffered: "", started: false };
      toolCalls.set(key, call);
    }
    if (typeof fragment.id === "string" && fragment.id !== "" && call.id === undefined) call.id = fragment.id;
    const fn = isRecord(fragment.function) ? fragment.function : {};
    if (typeof fn.name === "string" && fn.name !== "" && call.name === undefined) call.name = fn.name;
    appendArguments(call, typeof fn.arguments === "string" ? fn.arguments : "", parts);
    openIfNamed(call, parts);
  }

  /** Closes every open tool call, then the finish part. */
  function finishParts(finish: IrFinish): IrStreamPart[] {
    stream.finished = true;
    const parts: IrStreamPart[] = [];
    for (const call of toolCalls.values()) {
      // A fragment that never got a name cannot be called by anyone; it is not opened.
      if (call.started) parts.push({ type: "tool_call_end", index: call.index });
    }
    parts.push({ type: "finish", finish: refusal ? { ...finish, reason: "content_filter" } : finish });
    return parts;
  }

  return { push, end: () => stream.end(), warnings };
}

/**
 * Fields of a chunk this decoder does not read once the stream has started whose values
 * change from chunk to chunk (OpenAI pads each chunk with `obfuscation`) or from stream to
 * stream (the completion's `id` and `created`, and the `system_fingerprint` of the backend
 * that served it: left open, a shape one stream proved fits the next stream's chunks,
 * KNOWN_SHAPES).
 */
const UNREAD_FIELDS: IgnoredField[] = [
  { key: "obfuscation", value: "string" },
  { key: "id", value: "string", per: "stream" },
  { key: "created", value: "integer", per: "stream" },
  { key: "system_fingerprint", value: "string", per: "stream" },
];

/** Text and reasoning chunk shapes proven by this process's chat streams (delta-frame-shape.ts). */
const KNOWN_SHAPES = new KnownShapes();

function textLength(parts: readonly IrStreamPart[]): number {
  let length = 0;
  for (const part of parts) if (part.type === "text_delta") length += part.text.length;
  return length;
}
