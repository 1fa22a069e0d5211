/**
 * An OpenAI Responses client (the `openai` SDK): a response's output items, or a stream
 * read from its events (text and reasoning deltas, items as they are done, the terminal
 * event's status and usage, an `error` event).
 */
import OpenAI from "openai";
import { addCitation, addSearchResult, emptyView, parsedArguments, type ClientRequest, type ClientView } from "./client-view";

/** Items the client must run that are not function calls. */
const HOSTED_ITEMS = new Set(["local_shell_call", "shell_call", "apply_patch_call", "computer_call", "custom_tool_call", "mcp_approval_request"]);

function readItem(view: ClientView, item: any, withContent: boolean): void {
  switch (item.type) {
    case "message":
      for (const part of item.content ?? []) {
        if (withContent) view.text += part.type === "output_text" ? (part.text ?? "") : part.type === "refusal" ? (part.refusal ?? "") : "";
        for (const annotation of part.annotations ?? []) addCitation(view, annotation.url ?? annotation.filename ?? annotation.file_id);
      }
      break;
    case "reasoning":
      if (withContent) {
        const summary = (item.summary ?? []).map((part: any) => part.text ?? "").join("");
        view.reasoning += summary !== "" ? summary : (item.content ?? []).map((part: any) => part.text ?? "").join("");
      }
      break;
    case "function_call":
      view.toolCalls.push({ name: item.name, arguments: parsedArguments(item.arguments) });
      break;
    default:
      if (item.type === "tool_search_call" ? item.execution === "client" : HOSTED_ITEMS.has(item.type)) view.hostedCalls.push(item.type);
      else if (typeof item.type === "string" && !item.type.endsWith("_output")) view.serverTools.push(item.type);
      if (item.type === "web_search_call") for (const source of item.action?.sources ?? []) addSearchResult(view, source.url);
  }
}

function finishOf(response: any): string | undefined {
  if (response?.status === "incomplete") return `incomplete:${response.incomplete_details?.reason ?? ""}`;
  return response?.status;
}

export async function callOpenaiResponses(request: ClientRequest): Promise<ClientView> {
  const view = emptyView("openai-responses");
  const openai = new OpenAI({ apiKey: request.apiKey, baseURL: `${request.baseUrl}/v1`, maxRetries: 0, timeout: 60_000 });
  const body = { model: request.model, input: request.prompt, max_output_tokens: request.maxTokens };
  const options = { headers: { "x-request-id": request.requestId } };
  try {
    if (!request.stream) {
      const { data, response } = await openai.responses.create(body, options).withResponse();
      view.warningsHeader = response.headers.get("x-switchyard-warnings");
      for (const item of data.output ?? []) readItem(view, item, true);
      view.finish = finishOf(data);
      if (data.usage) view.usage = data.usage;
      if (data.status === "failed") {
        view.ok = false;
        view.error = { message: data.error?.message ?? "" };
      }
      return view;
    }
    const { data, response } = await openai.responses.create({ ...body, stream: true }, options).withResponse();
    view.warningsHeader = response.headers.get("x-switchyard-warnings");
    for await (const event of data as AsyncIterable<any>) {
      switch (event.type) {
        case "response.output_text.delta":
          view.text += event.delta;
          break;
        case "response.refusal.delta":
          view.text += event.delta;
          break;
        case "response.reasoning_summary_text.delta":
        case "response.reasoning_text.delta":
          view.reasoning += event.delta;
          break;
        case "response.output_text.annotation.added":
          addCitation(view, event.annotation?.url ?? event.annotation?.filename);
          break;
        case "response.output_item.done":
          readItem(view, event.item, false);
          break;
        case "response.completed":
        case "response.incomplete":
        case "response.failed":
          view.finish = finishOf(event.response);
          if (event.response?.usage) view.usage = event.response.usage;
          if (event.type === "response.failed") {
            view.ok = false;
            view.error ??= { message: event.response?.error?.message ?? "" };
          }
          break;
        case "error":
          view.ok = false;
          view.error = { message: event.message ?? event.error?.message ?? "" };
          break;
      }
    }
    return view;
  } catch (error) {
    if (!(error instanceof OpenAI.APIError)) throw error;
    view.ok = false;
    view.error = { ...(error.status === undefined ? {} : { status: error.status }), message: error.message };
    return view;
  }
}
