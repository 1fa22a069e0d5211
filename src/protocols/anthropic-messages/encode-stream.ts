import type { CodecContext, IrCitation, IrFinish, IrStreamPart, IrUsage, IrWarning, StreamEncoder } from "../../ir";
import { sseEvent } from "../sse";
import { CITATION_WITHOUT_TEXT, endsTextPart, CitedTextPart } from "../shared/citations";
import { droppedOutput, warnOnce } from "../shared/output-warnings";
import { toAnthropicUsage } from "./convert-usage";
import { anthropicCitation } from "./encode-citations";
import { webSearchBlocks } from "./encode-web-search";
import { anthropicMessageId, UNSIGNED_THINKING_MESSAGE } from "./encode-response";
import { toAnthropicErrorType } from "./error";
import { toAnthropicStopReason } from "./map-stop-reason";

interface ToolState {
  id: string;
  name: string;
  /** Argument fragments received while another block was open. */
  pending: string[];
  ended: boolean;
  opened: boolean;
}

type OpenBlock = { kind: "text"; index: number } | { kind: "tool"; index: number; tool: number };

/**
 * IR stream parts -> Anthropic Messages SSE in the documented order
 * (https://docs.anthropic.com/en/api/messages-streaming):
 * message_start, content_block_start/delta/stop per block (indexes increase, blocks never
 * interleave), message_delta with stop_reason and usage, message_stop.
 *
 * message_start is sent lazily with the first content so that the usage an upstream
 * reported at its start can fill `input_tokens`. The finish is held until end(): OpenAI
 * chat upstreams send usage AFTER the finish chunk, and the client must see the last
 * usage in message_delta (pitfall: cross-protocol streams ending with zero usage).
 * A tool call that starts while another is still open is queued and written as its own
 * block once the open one ends, so no argument fragment is ever dropped.
 *
 * Thinking goes out only with an Anthropic signature: the client replays its thinking
 * blocks on the next turn, and Anthropic rejects one that is unsigned or signed by
 * another vendor. A signature arrives at the end of its block, so thinking deltas are
 * held until it comes and then written as one whole block; reasoning that ends without
 * one (every non-Anthropic upstream) is dropped with a warning, as the non-streaming
 * encoder drops it.
 *
 * A citation is a `citations_delta` in its text block: Anthropic cites by block, so a
 * streamed citation goes on the whole block its text is in (unlike the whole answer, the
 * text cannot be split at a span once sent). One that has its cited passage (Anthropic's
 * own) goes out as soon as its block is open, right after content_block_start as Anthropic
 * sends it; one that has only a span, once the text it spans has arrived or its part ends.
 * A web search is a server_tool_use block (input as one input_json_delta) and its
 * web_search_tool_result block, whole.
 */
export function createAnthropicStreamEncoder(context: CodecContext): StreamEncoder {
  let started = false;
  let open: OpenBlock | undefined;
  let nextIndex = 0;
  const tools = new Map<number, ToolState>();
  const queue: number[] = [];
  let usage: IrUsage | undefined;
  let finish: IrFinish | undefined;
  let sawToolCall = false;
  let done = false;
  /** Thinking deltas of the current block, held until its signature arrives. */
  let heldThinking: string[] = [];
  const warnings: IrWarning[] = [];
  const textPart = new CitedTextPart();
  /** Citations placeable before their text (they carry the passage cited), waiting for their block to open. */
  const early: IrCitation[] = [];

  const ensureStarted = (): string => {
    if (started) return "";
    started = true;
    return sseEvent("message_start", {
      type: "message_start",
      message: {
        id: anthropicMessageId(context),
        type: "message",
        role: "assistant",
        model: context.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...toAnthropicUsage(usage), output_tokens: 0 },
      },
    });
  };

  const closeOpen = (): string => {
    if (open === undefined) return "";
    const frame = sseEvent("content_block_stop", { type: "content_block_stop", index: open.index });
    open = undefined;
    return frame;
  };

  /** Opens a tool_use block and replays its buffered fragments; closes it again if it already ended. */
  const openTool = (toolIndex: number): string => {
    const tool = tools.get(toolIndex);
    if (tool === undefined) return "";
    tool.opened = true;
    const index = nextIndex++;
    open = { kind: "tool", index, tool: toolIndex };
    let out = sseEvent("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: tool.id, name: tool.name, input: {} },
    });
    if (tool.pending.length > 0) {
      const partial = tool.pending.join("");
      tool.pending = [];
      out += sseEvent("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } });
    }
    if (tool.ended) out += closeOpen();
    return out;
  };

  /** Closes the open block and writes every queued tool call, leaving the last unfinished one open. */
  const drainQueue = (closeLast: boolean): string => {
    let out = "";
    if (open?.kind === "tool" && tools.get(open.tool)?.ended === false && !closeLast) return out;
    out += closeOpen();
    while (queue.length > 0) {
      const next = queue.shift();
      if (next === undefined) break;
      out += openTool(next);
      if (open !== undefined && !closeLast) return out;
      out += closeOpen();
    }
    return out;
  };

  const openText = (): string => {
    if (open?.kind === "text") return "";
    let out = drainQueue(true);
    const index = nextIndex++;
    open = { kind: "text", index };
    out += sseEvent("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
    return out + citationDeltas(early.splice(0));
  };

  const delta = (payload: Record<string, unknown>): string =>
    sseEvent("content_block_delta", { type: "content_block_delta", index: open?.index ?? 0, delta: payload });

  /** Citations of the current text part, into the open text block. */
  const citationDeltas = (citations: IrCitation[]): string => {
    let out = "";
    for (const citation of citations) {
      const wire = anthropicCitation(citation, textPart.text, warnings);
      if (wire !== undefined) out += delta({ type: "citations_delta", citation: wire });
    }
    return out;
  };

  /** The current text part ends: what it still holds goes into its block before that closes. */
  const endCitations = (): string => {
    const rest = [...early.splice(0), ...textPart.end()];
    if (rest.length === 0) return "";
    if (open?.kind === "text") return citationDeltas(rest);
    warnOnce(warnings, CITATION_WITHOUT_TEXT);
    return "";
  };

  /** A whole server-tool block: a server_tool_use opens with empty input and streams it, as Anthropic does. */
  const writeBlock = (block: ReturnType<typeof webSearchBlocks>[number]): string => {
    const index = nextIndex++;
    const start = block.type === "server_tool_use" ? { ...block, input: {} } : block;
    let out = sseEvent("content_block_start", { type: "content_block_start", index, content_block: start });
    if (block.type === "server_tool_use") {
      out += sseEvent("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    }
    return out + sseEvent("content_block_stop", { type: "content_block_stop", index });
  };

  /** Writes the held thinking as one complete block closed by its signature. */
  const writeSignedThinking = (signature: string): string => {
    let out = drainQueue(true);
    const index = nextIndex++;
    const deltaEvent = (payload: Record<string, unknown>) =>
      sseEvent("content_block_delta", { type: "content_block_delta", index, delta: payload });
    out += sseEvent("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } });
    for (const text of heldThinking) out += deltaEvent({ type: "thinking_delta", thinking: text });
    heldThinking = [];
    out += deltaEvent({ type: "signature_delta", signature });
    return out + sseEvent("content_block_stop", { type: "content_block_stop", index });
  };

  /** The held thinking will never be signed: the client does not get it, and is told. */
  const dropHeldThinking = (): void => {
    if (heldThinking.length === 0) return;
    heldThinking = [];
    warnOnce(warnings, droppedOutput("reasoning", UNSIGNED_THINKING_MESSAGE));
  };

  /**
   * Every part but a thinking delta or its signature ends the held thinking block: unsigned,
   * it is dropped. A citation does not decide it: it is held until its text, which does.
   */
  const dropUnsignedThinking = (part: IrStreamPart): void => {
    if (part.type !== "reasoning_delta" && part.type !== "reasoning_signature" && part.type !== "usage" && part.type !== "citation") dropHeldThinking();
  };

  const onPart = (part: IrStreamPart): string => {
    switch (part.type) {
      case "start":
        return "";
      case "usage":
        usage = part.usage;
        return "";
      case "text_delta":
        if (part.text === "") return ""; // never open an empty text block
        textPart.addText(part.text, 0);
        return ensureStarted() + openText() + delta({ type: "text_delta", text: part.text });
      case "reasoning_delta":
        if (part.text === "") return "";
        heldThinking.push(part.text);
        return ensureStarted();
      case "reasoning_signature":
        // A Gemini or OpenAI signature is no Anthropic signature: the held thinking stays unsigned.
        if (part.protocol !== "anthropic-messages") {
          dropHeldThinking();
          return "";
        }
        return ensureStarted() + writeSignedThinking(part.signature);
      case "redacted_reasoning": {
        if (part.protocol !== "anthropic-messages") {
          warnOnce(warnings, droppedOutput("redacted_reasoning", "redacted reasoning of another vendor cannot be replayed to Anthropic; not sent"));
          return "";
        }
        let out = ensureStarted() + drainQueue(true);
        const index = nextIndex++;
        out += sseEvent("content_block_start", { type: "content_block_start", index, content_block: { type: "redacted_thinking", data: part.data } });
        return out + sseEvent("content_block_stop", { type: "content_block_stop", index });
      }
      case "tool_call_start": {
        sawToolCall = true;
        tools.set(part.index, { id: part.id, name: part.name, pending: [], ended: false, opened: false });
        const out = ensureStarted();
        if (open?.kind === "tool" && tools.get(open.tool)?.ended === false) {
          queue.push(part.index);
          return out;
        }
        return out + drainQueue(true) + openTool(part.index);
      }
      case "tool_call_delta": {
        const tool = tools.get(part.index);
        if (tool === undefined || part.argumentsDelta === "") return "";
        if (open?.kind === "tool" && open.tool === part.index) return delta({ type: "input_json_delta", partial_json: part.argumentsDelta });
        if (!tool.opened) tool.pending.push(part.argumentsDelta);
        return "";
      }
      case "tool_call_end": {
        const tool = tools.get(part.index);
        if (tool === undefined) return "";
        tool.ended = true;
        if (open?.kind === "tool" && open.tool === part.index) return closeOpen() + drainQueue(false);
        return "";
      }
      case "citation": {
        const ready = textPart.cite(part.citation, 0, (citation, text) => citation.citedText !== undefined || (citation.end !== undefined && citation.end <= text.length));
        if (ready === undefined) return "";
        if (open?.kind === "text") return citationDeltas([ready]);
        early.push(ready);
        return "";
      }
      case "web_search":
        return ensureStarted() + drainQueue(true) + webSearchBlocks(part.search).map(writeBlock).join("");
      case "finish":
        finish = part.finish;
        return ensureStarted() + drainQueue(true);
      case "error": {
        done = true;
        const body = { type: "error", error: { type: toAnthropicErrorType(part.error), message: part.error.message } };
        return closeOpen() + sseEvent("error", body);
      }
    }
  };

  return {
    push(part: IrStreamPart): string {
      if (done) return "";
      dropUnsignedThinking(part);
      return (endsTextPart(part) ? endCitations() : "") + onPart(part);
    },
    end(): string {
      if (done) return "";
      done = true;
      dropHeldThinking();
      let out = endCitations() + ensureStarted() + drainQueue(true);
      out += sseEvent("message_delta", {
        type: "message_delta",
        delta: { stop_reason: toAnthropicStopReason(finish, sawToolCall), stop_sequence: null },
        usage: toAnthropicUsage(usage),
      });
      return out + sseEvent("message_stop", { type: "message_stop" });
    },
    warnings,
  };
}
