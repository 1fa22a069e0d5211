import { type IrCitation, type IrStreamPart, type IrWarning, type StreamDecoder } from "../../ir";
import { StreamEnding } from "../shared/stream-frame";
import type { SseEvent } from "../sse";
import { decodeOpenAiStreamError } from "../openai-shared/decode-openai-error";
import { appendArguments, openIfNamed, type PendingToolCall } from "../openai-shared/pending-tool-call";
import { isRecord, type JsonObject } from "../openai-shared/read-fields";
import { decodeResponsesUsage } from "./convert-usage";
import { decodeResponsesStatus } from "./map-finish-reason";
import { SUMMARY_SEPARATOR } from "./reasoning-item-ref";
import { CLIENT_ACTION_ITEMS, PendingApprovals } from "./client-actions";
import { warnDroppedUpstream } from "../shared/output-warnings";
import { readOutputTextCitations, warnDroppedItem } from "./dropped-output";
import { placeCitation, readUrlCitation } from "../openai-shared/url-citation";
import { TextPartCursor, type TextPosition } from "../shared/text-part-cursor";
import { readWebSearchCall } from "./web-search-call";
import { DeltaFrameShape, isDeltaPart, type IgnoredField } from "../shared/delta-frame-shape";

/** The events whose one text or reasoning delta is read from the frame's `delta` field. */
const DELTA_EVENTS = new Set(["response.output_text.delta", "response.refusal.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta"]);

/** Argument text of a function call: a delta once the call is open. */
const ARGUMENTS_EVENT = "response.function_call_arguments.delta";

/** Fields of an event this decoder never reads whose values change from event to event. */
const UNREAD_FIELDS: IgnoredField[] = [
  { key: "sequence_number", value: "integer" },
  { key: "obfuscation", value: "string" },
];

/** One output text (a message's content part), which its annotations index. */
interface OutputTextState {
  /** Where its text begins in the IR's current text part. */
  start: TextPosition;
  /** The `annotation_index`es already sent as citations. */
  delivered: Set<number>;
}

interface FunctionCallState extends PendingToolCall {
  /** Arguments received so far (streamed or buffered before the name was known). */
  received: string;
  ended: boolean;
}

/**
 * Responses SSE events -> IR stream parts (event list in
 * platform.openai.com/docs/api-reference/responses-streaming). The event's `type` field is
 * authoritative (the `event:` line repeats it). Usage comes from the terminal response;
 * `response.failed` and `error` become an error part — after any usage the failed
 * response reports, since those tokens were still produced. A finished `web_search_call`
 * item is a web search part (its progress events carry nothing), and the usage counts them.
 * A `url_citation` annotation is a citation part when it is added
 * (`response.output_text.annotation.added`); the finished part and message repeat every
 * annotation, and only those not already sent are sent then. Other hosted tool items and
 * annotations are named in `warnings` as the response decoder names them (an item when it
 * is added, annotations as they are added or on the finished message).
 */
export function createResponsesStreamDecoder(options: { readShapes?: boolean } = {}): StreamDecoder {
  let started = false;
  const stream = new StreamEnding();
  let refusal = false;
  const calls = new Map<string, FunctionCallState>();
  /** output_index -> item id, for events that only carry the index. */
  const itemIds = new Map<number, string>();
  const approvals = new PendingApprovals();
  const warnings: IrWarning[] = [];
  const textPart = new TextPartCursor();
  /** `item_id:content_index` -> the output text's state. */
  const outputTexts = new Map<string, OutputTextState>();
  let webSearches = 0;
  /** `readShapes: false` parses every frame: what the shortcut is tested against. */
  const shape = options.readShapes === false ? undefined : new DeltaFrameShape(UNREAD_FIELDS);

  /** The open call whose argument text the current shape stands for: what it received grows with each. */
  let shapeCall: FunctionCallState | undefined;

  function push(event: SseEvent): IrStreamPart[] {
    const delta = stream.over ? undefined : shape?.match(event);
    if (delta?.type === "tool_call_delta") shapeCall!.received += delta.argumentsDelta;
    const parts = delta === undefined ? decodeAndLearn(event) : [delta];
    textPart.note(parts);
    return parts;
  }

  /**
   * Parses the frame. A text, refusal or reasoning delta that did nothing else teaches the
   * shape of the next: after the first delta of an output text (which begins its state),
   * one changes nothing here but the text position. So does argument text for a call
   * already open, which adds to what the call received and nothing more.
   */
  function decodeAndLearn(event: SseEvent): IrStreamPart[] {
    shape?.forget();
    const warned = warnings.length;
    const parts = decodeEvent(event);
    const only = parts.length === 1 ? parts[0] : undefined;
    if (!isDeltaPart(only) || warnings.length !== warned || decodedType === undefined) return parts;
    if (only.type === "tool_call_delta") {
      if (decodedType !== ARGUMENTS_EVENT || !isRecord(decodedFrame)) return parts;
      shapeCall = callOf(decodedFrame);
      shape?.learn(event, decodedFrame, only);
    } else if (DELTA_EVENTS.has(decodedType)) shape?.learn(event, decodedFrame, only);
    return parts;
  }

  /** The type and the value of the frame decodeEvent last parsed. */
  let decodedType: string | undefined;
  let decodedFrame: unknown;

  function decodeEvent(event: SseEvent): IrStreamPart[] {
    decodedType = undefined;
    decodedFrame = undefined;
    if (stream.over || event.data === "[DONE]") return [];
    const frame = stream.parse(event.data, "upstream sent a stream frame that is not JSON");
    if (!frame.ok) return frame.parts;
    const data = frame.value;
    if (!isRecord(data)) return [];
    const type = typeof data.type === "string" ? data.type : event.event;
    decodedType = type;
    decodedFrame = data;
    const parts: IrStreamPart[] = [];
    if (!started && type !== "error") {
      started = true;
      const response = isRecord(data.response) ? data.response : {};
      const start: IrStreamPart = { type: "start" };
      if (typeof response.id === "string") start.id = response.id;
      if (typeof response.model === "string") start.model = response.model;
      parts.push(start);
    }
    switch (type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (type === "response.refusal.delta") refusal = true;
        outputText(data.item_id, data.content_index, parts);
        if (typeof data.delta === "string" && data.delta !== "") parts.push({ type: "text_delta", text: data.delta });
        break;
      case "response.reasoning_text.delta":
      case "response.reasoning_summary_text.delta":
        if (typeof data.delta === "string" && data.delta !== "") parts.push({ type: "reasoning_delta", text: data.delta });
        break;
      case "response.reasoning_summary_part.added":
        // Summary parts are paragraphs; keep them apart as the non-stream decoder does.
        if (typeof data.summary_index === "number" && data.summary_index > 0) parts.push({ type: "reasoning_delta", text: SUMMARY_SEPARATOR });
        break;
      case "response.output_item.added":
        if (isRecord(data.item)) onItem(data.item, data.output_index, parts, false);
        break;
      case ARGUMENTS_EVENT:
        onArguments(data, typeof data.delta === "string" ? data.delta : "", parts);
        break;
      case "response.function_call_arguments.done":
        if (typeof data.arguments === "string") completeArguments(callOf(data), data.arguments, parts);
        break;
      case "response.output_item.done":
        if (isRecord(data.item)) onItem(data.item, data.output_index, parts, true);
        break;
      case "response.content_part.added":
        if (isRecord(data.part) && (data.part.type === "output_text" || data.part.type === "refusal")) outputText(data.item_id, data.content_index, parts);
        break;
      case "response.content_part.done":
        if (isRecord(data.part) && data.part.type === "output_text") onFinishedText(data.item_id, data.content_index, data.part, parts);
        break;
      case "response.output_text.annotation.added":
        onAnnotation(data, parts);
        break;
      case "response.completed":
      case "response.incomplete":
        decoder.clientAction ??= approvals.unanswered();
        onTerminal(isRecord(data.response) ? data.response : {}, parts);
        break;
      case "response.failed": {
        const response = isRecord(data.response) ? data.response : {};
        pushUsage(response, parts);
        parts.push({ type: "error", error: decodeOpenAiStreamError({ error: response.error ?? "the upstream response failed" }) });
        stream.failed = true;
        break;
      }
      case "error":
        parts.push({ type: "error", error: decodeOpenAiStreamError(data) });
        stream.failed = true;
        break;
      default:
        break; // created, in_progress, *.done text events, hosted-tool progress
    }
    return parts;
  }

  function onItem(item: JsonObject, outputIndex: unknown, parts: IrStreamPart[], done: boolean): void {
    if (item.type === "message") {
      if (done) onFinishedMessage(item, parts);
      return;
    }
    if (item.type === "reasoning") return;
    if (item.type === "web_search_call") {
      // Sent once finished: only then does its action say what it searched and found.
      if (done) {
        webSearches++;
        parts.push({ type: "web_search", search: readWebSearchCall(item, `ws_${String(outputIndex)}`) });
      }
      return;
    }
    if (typeof item.type === "string" && CLIENT_ACTION_ITEMS.has(item.type)) decoder.clientAction ??= item.type;
    else if (item.type !== "function_call") warnDroppedItem(warnings, item.type);
    if (done) approvals.onItem(item);
    if (item.type !== "function_call") return;
    const key = typeof item.id === "string" ? item.id : `output_${String(outputIndex)}`;
    if (typeof outputIndex === "number") itemIds.set(outputIndex, key);
    let call = calls.get(key);
    if (call === undefined) {
      call = { index: calls.size, received: "", buffered: "", started: false, ended: false };
      calls.set(key, call);
    }
    if (typeof item.call_id === "string" && item.call_id !== "") call.id ??= item.call_id;
    if (typeof item.name === "string" && item.name !== "") call.name ??= item.name;
    if (typeof item.arguments === "string" && item.arguments !== "") completeArguments(call, item.arguments, parts);
    else openIfNamed(call, parts);
    if (done && call.started && !call.ended) {
      call.ended = true;
      parts.push({ type: "tool_call_end", index: call.index });
    }
  }

  /** The state of an output text, begun here if this is the first event of it. */
  function outputText(itemId: unknown, contentIndex: unknown, parts: readonly IrStreamPart[]): OutputTextState {
    const key = `${String(itemId)}:${String(contentIndex)}`;
    let state = outputTexts.get(key);
    if (state === undefined) {
      state = { start: textPart.positionWith(parts), delivered: new Set() };
      outputTexts.set(key, state);
    }
    return state;
  }

  function onAnnotation(data: JsonObject, parts: IrStreamPart[]): void {
    const state = outputText(data.item_id, data.content_index, parts);
    const index = typeof data.annotation_index === "number" ? data.annotation_index : state.delivered.size;
    if (state.delivered.has(index)) return;
    state.delivered.add(index);
    const citation = readUrlCitation(data.annotation);
    if (citation === undefined) warnDroppedUpstream(warnings, "annotations", "on output text");
    else sendCitation(state, citation, parts);
  }

  /** A citation of an output text, its span moved to where that text begins in the current text part. */
  function sendCitation(state: OutputTextState, citation: IrCitation, parts: IrStreamPart[]): void {
    // Another kind of part came since that text began: the citation has no text part to go with.
    if (state.start.epoch !== textPart.positionWith(parts).epoch) return warnDroppedUpstream(warnings, "annotations", "on output text");
    parts.push({ type: "citation", citation: placeCitation(citation, state.start.length, Infinity) });
  }

  /** A finished output text repeats its annotations: those no event delivered are sent now. */
  function onFinishedText(itemId: unknown, contentIndex: unknown, part: JsonObject, parts: IrStreamPart[]): void {
    if (!Array.isArray(part.annotations)) return;
    const state = outputText(itemId, contentIndex, parts);
    part.annotations.forEach((annotation: unknown, index: number) => {
      if (state.delivered.has(index)) return;
      state.delivered.add(index);
      const [citation] = readOutputTextCitations({ annotations: [annotation] }, warnings);
      if (citation !== undefined) sendCitation(state, citation, parts);
    });
  }

  /** A finished message repeats its content: annotations not yet delivered, and parts of another type (named). */
  function onFinishedMessage(item: JsonObject, parts: IrStreamPart[]): void {
    if (!Array.isArray(item.content)) return;
    item.content.forEach((part: unknown, contentIndex: number) => {
      if (!isRecord(part) || part.type === "refusal") return;
      if (part.type !== "output_text") warnDroppedUpstream(warnings, part.type, "message content part");
      else onFinishedText(item.id, contentIndex, part, parts);
    });
  }

  function callOf(data: JsonObject): FunctionCallState | undefined {
    const key = typeof data.item_id === "string" ? data.item_id : typeof data.output_index === "number" ? itemIds.get(data.output_index) : undefined;
    return key === undefined ? undefined : calls.get(key);
  }

  function onArguments(data: JsonObject, delta: string, parts: IrStreamPart[]): void {
    const call = callOf(data);
    if (call === undefined || delta === "") return;
    call.received += delta;
    appendArguments(call, delta, parts);
  }

  /** A `.done` event or a finished item carries the full arguments: send what was not streamed. */
  function completeArguments(call: FunctionCallState | undefined, full: string, parts: IrStreamPart[]): void {
    if (call === undefined) return;
    if (full.startsWith(call.received) && full.length > call.received.length) {
      const rest = full.slice(call.received.length);
      call.received = full;
      appendArguments(call, rest, parts);
    }
    openIfNamed(call, parts);
  }

  function onTerminal(response: JsonObject, parts: IrStreamPart[]): void {
    stream.finished = true;
    let hasToolCalls = false;
    for (const call of calls.values()) {
      if (!call.started) continue;
      hasToolCalls = true;
      if (!call.ended) parts.push({ type: "tool_call_end", index: call.index });
      call.ended = true;
    }
    const incomplete = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    parts.push({ type: "finish", finish: decodeResponsesStatus(response.status, incomplete, { hasToolCalls, refusal }) });
    pushUsage(response, parts);
  }

  function pushUsage(response: JsonObject, parts: IrStreamPart[]): void {
    const usage = decodeResponsesUsage(response.usage);
    if (usage === undefined) return;
    if (webSearches > 0) usage.webSearchCount = webSearches;
    parts.push({ type: "usage", usage });
  }

  const end = (): IrStreamPart[] => stream.end();
  const decoder: { push: typeof push; end: typeof end; warnings: readonly IrWarning[]; clientAction?: string } = { push, end, warnings };
  return decoder;
}
