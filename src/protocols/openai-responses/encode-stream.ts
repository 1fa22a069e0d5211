import { ERROR_TABLE } from "../../errors/error-table";
import { irError, type CodecContext, type IrCitation, type IrError, type IrFinish, type IrStreamPart, type IrUsage, type IrWarning, type IrWebSearchPart, type StreamEncoder } from "../../ir";
import { CITATION_WITHOUT_TEXT, endsTextPart, placeCitations, CitedTextPart } from "../shared/citations";
import { warnOnce } from "../shared/output-warnings";
import { encodeResponsesUsage } from "./convert-usage";
import { REDACTED_REASONING } from "./encode-response";
import { encodeResponsesStatus } from "./map-finish-reason";
import { functionCallItem, messageItem, outputTextPart, reasoningItem, urlCitation, webSearchItem, webSearchItemId, type OutputItem } from "./output-items";
import { encodeResponseId } from "./response-id";

type OpenItem =
  | { kind: "message"; id: string; outputIndex: number; text: string; annotations: Array<Record<string, unknown>> }
  | { kind: "reasoning"; id: string; outputIndex: number; text: string }
  | { kind: "function_call"; id: string; outputIndex: number; toolIndex: number; callId: string; name: string; text: string };

/**
 * IR stream parts -> Responses SSE events. Every event has an
 * `event:` line equal to its `type` and a `sequence_number` counting from 0. Items never
 * interleave: opening a new kind closes the open one. A citation is a
 * `response.output_text.annotation.added` once the text it spans has been sent (one without
 * a span when its text part ends), and its annotation is repeated in the message's done
 * events and the terminal response, as OpenAI does; a web search is a whole
 * `web_search_call` item with OpenAI's in_progress, searching and completed events. The terminal event is written by
 * `end()` (usage can arrive after the finish part) and lists every completed item with the
 * buffered usage; an error part ends the stream with `response.failed`. No `[DONE]`.
 */
export function createResponsesStreamEncoder(context: CodecContext, _options: { includeUsage: boolean }): StreamEncoder {
  const responseId = encodeResponseId(context.requestId);
  let sequence = 0;
  let opened = false;
  let closed = false;
  let open: OpenItem | undefined;
  let finish: IrFinish | undefined;
  let usage: IrUsage | undefined;
  const completed: OutputItem[] = [];
  const warnings: IrWarning[] = [];
  const toolIndexesSeen = new Set<number>();
  /** Parts of tool calls that started while another call was open; replayed once it closes (items never interleave). */
  const held: IrStreamPart[] = [];
  const isHeld = (index: number): boolean => held.some((part) => part.type === "tool_call_start" && part.index === index);
  const release = (): string => held.splice(0).map(push).join("");
  const textPart = new CitedTextPart();

  function event(type: string, fields: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  }

  function response(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const output = status === "in_progress" ? [] : completed;
    return { id: responseId, object: "response", created_at: context.created, status, model: context.model, output, ...extra };
  }

  function ensureOpened(): string {
    if (opened) return "";
    opened = true;
    return event("response.created", { response: response("in_progress") }) + event("response.in_progress", { response: response("in_progress") });
  }

  function openText(kind: "message" | "reasoning"): string {
    if (open?.kind === kind) return "";
    let out = closeAll();
    const outputIndex = completed.length;
    const id = context.newId(kind === "message" ? "msg" : "rs");
    open = kind === "message" ? { kind, id, outputIndex, text: "", annotations: [] } : { kind, id, outputIndex, text: "" };
    const item = kind === "message" ? messageItem(id, undefined, "in_progress") : reasoningItem(id, undefined, "in_progress");
    out += event("response.output_item.added", { output_index: outputIndex, item });
    const part = kind === "message" ? outputTextPart("") : { type: "reasoning_text", text: "" };
    out += event("response.content_part.added", { item_id: id, output_index: outputIndex, content_index: 0, part });
    return out;
  }

  function closeOpen(): string {
    const item = open;
    if (item === undefined) return "";
    open = undefined;
    const at = { item_id: item.id, output_index: item.outputIndex };
    let out: string;
    let done: OutputItem;
    if (item.kind === "function_call") {
      done = functionCallItem(item.id, item.callId, item.name, item.text, "completed");
      out = event("response.function_call_arguments.done", { ...at, arguments: item.text });
    } else if (item.kind === "message") {
      done = messageItem(item.id, item.text, "completed", item.annotations);
      out =
        event("response.output_text.done", { ...at, content_index: 0, text: item.text, logprobs: [] }) +
        event("response.content_part.done", { ...at, content_index: 0, part: outputTextPart(item.text, item.annotations) });
    } else {
      done = reasoningItem(item.id, item.text, "completed");
      out =
        event("response.reasoning_text.done", { ...at, content_index: 0, text: item.text }) +
        event("response.content_part.done", { ...at, content_index: 0, part: { type: "reasoning_text", text: item.text } });
    }
    completed.push(done);
    return out + event("response.output_item.done", { output_index: item.outputIndex, item: done });
  }

  function closeAll(): string {
    let out = "";
    while (open !== undefined || held.length > 0) out += closeOpen() + release();
    return out;
  }

  /** Annotations on the open message for citations of the current text part. */
  function annotate(citations: IrCitation[]): string {
    if (citations.length === 0) return "";
    if (open?.kind !== "message") {
      warnOnce(warnings, CITATION_WITHOUT_TEXT);
      return "";
    }
    const message = open;
    let out = "";
    for (const citation of placeCitations(citations, textPart.start, textPart.text, warnings)) {
      const annotation = urlCitation(citation);
      const at = { item_id: message.id, output_index: message.outputIndex, content_index: 0 };
      out += event("response.output_text.annotation.added", { ...at, annotation_index: message.annotations.length, annotation });
      message.annotations.push(annotation);
    }
    return out;
  }

  /** A whole web_search_call item, with the events OpenAI sends while its search runs. */
  function writeSearch(search: IrWebSearchPart): string {
    let out = ensureOpened() + closeAll();
    const at = { item_id: webSearchItemId(search), output_index: completed.length };
    out += event("response.output_item.added", { output_index: at.output_index, item: { id: at.item_id, type: "web_search_call", status: "in_progress" } });
    out += event("response.web_search_call.in_progress", at) + event("response.web_search_call.searching", at);
    const item = webSearchItem(search);
    if (item.status === "completed") out += event("response.web_search_call.completed", at);
    completed.push(item);
    return out + event("response.output_item.done", { output_index: at.output_index, item });
  }

  function push(part: IrStreamPart): string {
    if (closed) return "";
    // The citations a text part still holds go on its message before whatever ends it closes it.
    return (endsTextPart(part) ? annotate(textPart.end()) : "") + write(part);
  }

  function write(part: IrStreamPart): string {
    switch (part.type) {
      case "start":
        return ensureOpened();
      case "text_delta":
      case "reasoning_delta": {
        if (part.text === "") return "";
        const kind = part.type === "text_delta" ? "message" : "reasoning";
        let out = ensureOpened() + openText(kind);
        if (open === undefined || open.kind === "function_call") return out;
        if (open.kind === "message") textPart.addText(part.text, open.text.length);
        open.text += part.text;
        const type = kind === "message" ? "response.output_text.delta" : "response.reasoning_text.delta";
        const extra = kind === "message" ? { logprobs: [] } : {};
        out += event(type, { item_id: open.id, output_index: open.outputIndex, content_index: 0, delta: part.text, ...extra });
        return out;
      }
      case "tool_call_start": {
        if (toolIndexesSeen.has(part.index)) return "";
        if (open?.kind === "function_call" || held.length > 0) {
          held.push(part);
          return ensureOpened();
        }
        toolIndexesSeen.add(part.index);
        let out = ensureOpened() + closeOpen();
        const id = context.newId("fc");
        open = { kind: "function_call", id, outputIndex: completed.length, toolIndex: part.index, callId: part.id, name: part.name, text: "" };
        out += event("response.output_item.added", { output_index: open.outputIndex, item: functionCallItem(id, part.id, part.name, "", "in_progress") });
        return out;
      }
      case "tool_call_delta":
        if (isHeld(part.index)) held.push(part);
        if (open?.kind !== "function_call" || open.toolIndex !== part.index || part.argumentsDelta === "") return "";
        open.text += part.argumentsDelta;
        return event("response.function_call_arguments.delta", { item_id: open.id, output_index: open.outputIndex, delta: part.argumentsDelta });
      case "tool_call_end":
        if (isHeld(part.index)) held.push(part);
        return open?.kind === "function_call" && open.toolIndex === part.index ? closeOpen() + release() : "";
      case "citation": {
        const ready = textPart.cite(part.citation, open?.kind === "message" ? open.text.length : 0);
        return ready === undefined ? "" : annotate([ready]);
      }
      case "web_search":
        return writeSearch(part.search);
      case "usage":
        usage = part.usage;
        return "";
      case "finish":
        finish = part.finish;
        return ensureOpened() + closeAll();
      case "error":
        return fail(part.error);
      case "redacted_reasoning":
        warnOnce(warnings, REDACTED_REASONING);
        return "";
      default:
        return ""; // reasoning signatures: another vendor's, not content (shared/output-warnings.ts)
    }
  }

  function fail(error: IrError): string {
    closed = true;
    const body = response("failed", { error: { code: ERROR_TABLE[error.kind].code, message: error.message } });
    if (usage !== undefined) body.usage = encodeResponsesUsage(usage);
    return ensureOpened() + event("response.failed", { response: body });
  }

  function end(): string {
    // The last text part's held citations go on its message before the terminal events close it.
    return closed ? "" : annotate(textPart.end()) + terminate();
  }

  function terminate(): string {
    if (finish === undefined) return fail(irError("upstream_invalid_response", "stream ended before the response finished"));
    const { status, incompleteReason } = encodeResponsesStatus(finish);
    if (status === "failed") return closeOpen() + fail(irError("upstream_bad_gateway", "upstream request failed"));
    closed = true;
    const extra: Record<string, unknown> = incompleteReason === undefined ? {} : { incomplete_details: { reason: incompleteReason } };
    if (usage !== undefined) extra.usage = encodeResponsesUsage(usage);
    const type = status === "incomplete" ? "response.incomplete" : "response.completed";
    return ensureOpened() + closeAll() + event(type, { response: response(status, extra) });
  }

  return { push, end, warnings };
}
