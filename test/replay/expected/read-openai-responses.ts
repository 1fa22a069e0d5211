/**
 * An OpenAI Responses answer (https://platform.openai.com/docs/api-reference/responses/object),
 * a body or a stream (https://platform.openai.com/docs/api-reference/responses-streaming),
 * as OpenAI, Azure, xAI and GitHub Copilot send them, read into an ExpectedAnswer. A stream
 * is read from its terminal event's response (its output, else the items of its
 * `response.output_item.done` events) and its `error` event.
 */
import { cite, emptyAnswer, parseArguments, type ExpectedAnswer, type ExpectedError } from "./expected-answer";
import { sseJson } from "../../metering/metering-support";

/** Items that ask the client to act but are not function calls: the client must run them. */
const HOSTED_CALLS = new Set(["local_shell_call", "apply_patch_call", "computer_call", "custom_tool_call", "mcp_approval_request"]);

/** Items the provider produced by running a tool itself (their `*_output` items pair with them). */
const SERVER_TOOLS = new Set([
  "web_search_call",
  "file_search_call",
  "code_interpreter_call",
  "image_generation_call",
  "mcp_call",
  "mcp_list_tools",
  "x_search_call",
  "compaction",
  "program",
]);

/**
 * OpenAI's error codes and the HTTP status the API answers them with
 * (platform.openai.com/docs/guides/error-codes); a quota error is a payment matter, which
 * the gateway may also answer as 402.
 */
const ERROR_STATUSES: Readonly<Record<string, number[]>> = {
  insufficient_quota: [429, 402],
  rate_limit_exceeded: [429],
  invalid_request_error: [400],
  server_error: [500],
};

/**
 * A shell call OpenAI ran in its container is followed by its output item; one without
 * an output is for the client to run. A tool search says where it runs.
 */
function kindOf(item: any, shellOutputs: Set<unknown>): "hosted" | "server" | undefined {
  if (item.type === "shell_call") return shellOutputs.has(item.call_id) ? "server" : "hosted";
  if (item.type === "tool_search_call") return item.execution === "client" ? "hosted" : "server";
  if (HOSTED_CALLS.has(item.type)) return "hosted";
  return SERVER_TOOLS.has(item.type) ? "server" : undefined;
}

function readItem(item: any, answer: ExpectedAnswer, refusal: { seen: boolean }, shellOutputs: Set<unknown>): void {
  switch (item.type) {
    case "message":
      for (const part of item.content ?? []) {
        if (part.type === "output_text") {
          answer.text += part.text ?? "";
          for (const annotation of part.annotations ?? []) cite(answer, annotation.url ?? annotation.filename ?? annotation.file_id, annotation.type === "url_citation" ? "web" : "file");
        } else if (part.type === "refusal") {
          answer.text += part.refusal ?? "";
          refusal.seen = true;
        }
      }
      break;
    case "reasoning": {
      const summary = (item.summary ?? []).map((part: any) => part.text ?? "").join("");
      const content = (item.content ?? []).map((part: any) => part.text ?? "").join("");
      answer.reasoning += summary !== "" ? summary : content;
      if (summary !== "") answer.summarizedReasoning = true;
      break;
    }
    case "function_call":
      answer.toolCalls.push({ name: item.name, arguments: parseArguments(item.arguments) });
      break;
    default: {
      const kind = kindOf(item, shellOutputs);
      if (kind === "hosted") answer.hostedCalls.push(item.type);
      else if (kind === "server") answer.serverTools.push(item.type);
    }
  }
}

function errorOf(error: any): ExpectedError {
  const inner = error?.error ?? error;
  const code: string | undefined = inner?.code ?? inner?.type;
  return { message: inner?.message ?? "", statuses: (code === undefined ? undefined : ERROR_STATUSES[code]) ?? [] };
}

function readResponse(response: any, items: any[], answer: ExpectedAnswer): void {
  const refusal = { seen: false };
  const shellOutputs = new Set(items.filter((item) => item.type === "shell_call_output").map((item) => item.call_id));
  for (const item of items) readItem(item, answer, refusal, shellOutputs);
  const incomplete = response.incomplete_details?.reason;
  if (response.status === "failed") {
    answer.finish = "error";
    answer.error ??= errorOf(response.error);
  } else if (response.status === "incomplete") answer.finish = incomplete === "content_filter" ? "content_filter" : "length";
  else if (refusal.seen) answer.finish = "content_filter";
  else answer.finish = answer.toolCalls.length > 0 || answer.hostedCalls.length > 0 ? "tool_calls" : "stop";
  const usage = response.usage;
  if (usage !== undefined && usage !== null) {
    const reasoning: number | undefined = usage.output_tokens_details?.reasoning_tokens;
    const cacheRead: number | undefined = usage.input_tokens_details?.cached_tokens;
    let completion: number | undefined = usage.output_tokens;
    // Counted outside when the total says so (no vendor seen does, but the reader does not assume it).
    if (completion !== undefined && reasoning !== undefined && reasoning > 0 && usage.total_tokens === usage.input_tokens + completion + reasoning) completion += reasoning;
    answer.usage = {
      ...(usage.input_tokens === undefined ? {} : { prompt: usage.input_tokens }),
      ...(completion === undefined ? {} : { completion }),
      ...(reasoning === undefined ? {} : { reasoning }),
      ...(cacheRead === undefined ? {} : { cacheRead }),
    };
  }
}

const TERMINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed"]);

export function readOpenaiResponses(bytes: string, mode: "sync" | "stream"): ExpectedAnswer {
  const answer = emptyAnswer();
  if (mode === "sync") {
    const body = JSON.parse(bytes);
    readResponse(body, body.output ?? [], answer);
    return answer;
  }
  const doneItems: any[] = [];
  let terminal: any;
  let deltas = "";
  for (const json of sseJson(bytes)) {
    if (json.type === "response.output_text.delta") deltas += json.delta;
    else if (json.type === "response.output_item.done") doneItems[json.output_index ?? doneItems.length] = json.item;
    else if (TERMINAL_EVENTS.has(json.type)) terminal = json.response;
    else if (json.type === "error") answer.error = errorOf(json.error ?? json);
  }
  if (terminal === undefined) {
    answer.finish = "error";
    return answer;
  }
  const output: any[] = terminal.output ?? [];
  readResponse(terminal, output.length > 0 ? output : doneItems.filter((item) => item !== undefined), answer);
  // A stream whose deltas do not add up to its final text was edited, not recorded.
  if (deltas !== answer.text) throw new Error(`the stream's text deltas (${deltas.length} characters) are not its final text (${answer.text.length})`);
  if (answer.error !== undefined) answer.finish = "error";
  return answer;
}
