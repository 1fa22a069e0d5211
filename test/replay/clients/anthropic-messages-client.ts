/**
 * An Anthropic Messages client (`@anthropic-ai/sdk`): a message's content blocks, or a
 * stream's events (blocks from their start and deltas, usage from `message_start` merged
 * with `message_delta`'s, as the SDK's own accumulator does).
 */
import Anthropic from "@anthropic-ai/sdk";
import { addCitation, addSearchResult, emptyView, parsedArguments, type ClientRequest, type ClientView } from "./client-view";

const CONTENT_BLOCKS = new Set(["text", "thinking", "redacted_thinking", "tool_use"]);

/** Server tools and any other block the provider produced for itself (compaction, …); results pair with their use. */
function readBlockStart(view: ClientView, block: any): void {
  if (block.type === "redacted_thinking") view.redactedReasoning += 1;
  else if (block.type === "server_tool_use") view.serverTools.push(block.name);
  else if (block.type === "mcp_tool_use") view.serverTools.push(`mcp:${block.name}`);
  else if (!CONTENT_BLOCKS.has(block.type) && !String(block.type).endsWith("_tool_result")) view.serverTools.push(block.type);
  if (block.type === "web_search_tool_result" && Array.isArray(block.content)) for (const result of block.content) addSearchResult(view, result.url);
}

function readCitations(view: ClientView, citations: any[] | null | undefined): void {
  for (const citation of citations ?? []) addCitation(view, citation.url ?? citation.document_title ?? citation.title);
}

export async function callAnthropicMessages(request: ClientRequest): Promise<ClientView> {
  const view = emptyView("anthropic-messages");
  const anthropic = new Anthropic({ apiKey: request.apiKey, baseURL: request.baseUrl, maxRetries: 0, timeout: 60_000 });
  const body = { model: request.model, max_tokens: request.maxTokens, messages: [{ role: "user" as const, content: request.prompt }] };
  const options = { headers: { "x-request-id": request.requestId } };
  try {
    if (!request.stream) {
      const { data, response } = await anthropic.messages.create(body, options).withResponse();
      view.warningsHeader = response.headers.get("x-switchyard-warnings");
      for (const block of data.content as any[]) {
        readBlockStart(view, block);
        if (block.type === "text") {
          view.text += block.text;
          readCitations(view, block.citations);
        } else if (block.type === "thinking") view.reasoning += block.thinking;
        else if (block.type === "tool_use") view.toolCalls.push({ name: block.name, arguments: block.input });
      }
      if (data.stop_reason) view.finish = data.stop_reason;
      view.usage = data.usage;
      return view;
    }
    const { data, response } = await anthropic.messages.create({ ...body, stream: true }, options).withResponse();
    view.warningsHeader = response.headers.get("x-switchyard-warnings");
    const toolInputs = new Map<number, { name: string; json: string; input: unknown }>();
    const usage: Record<string, any> = {};
    for await (const event of data as AsyncIterable<any>) {
      switch (event.type) {
        case "message_start":
          Object.assign(usage, event.message.usage);
          break;
        case "content_block_start":
          readBlockStart(view, event.content_block);
          if (event.content_block.type === "tool_use") toolInputs.set(event.index, { name: event.content_block.name, json: "", input: event.content_block.input });
          if (event.content_block.type === "text") {
            view.text += event.content_block.text ?? "";
            readCitations(view, event.content_block.citations);
          }
          break;
        case "content_block_delta":
          if (event.delta.type === "text_delta") view.text += event.delta.text;
          else if (event.delta.type === "thinking_delta") view.reasoning += event.delta.thinking;
          else if (event.delta.type === "citations_delta") readCitations(view, [event.delta.citation]);
          else if (event.delta.type === "input_json_delta") {
            const entry = toolInputs.get(event.index);
            if (entry !== undefined) entry.json += event.delta.partial_json;
          }
          break;
        case "message_delta":
          if (event.delta.stop_reason) view.finish = event.delta.stop_reason;
          for (const [key, value] of Object.entries(event.usage ?? {})) if (value !== null && value !== undefined) usage[key] = value;
          break;
      }
    }
    for (const index of [...toolInputs.keys()].sort((a, b) => a - b)) {
      const entry = toolInputs.get(index)!;
      view.toolCalls.push({ name: entry.name, arguments: entry.json === "" ? (entry.input ?? {}) : parsedArguments(entry.json) });
    }
    view.usage = usage;
    return view;
  } catch (error) {
    if (!(error instanceof Anthropic.APIError)) throw error;
    view.ok = false;
    const body = error.error as { error?: { message?: string } } | undefined;
    view.error = { ...(error.status === undefined ? {} : { status: error.status }), message: body?.error?.message ?? error.message };
    return view;
  }
}
