/**
 * An OpenAI-compatible chat completion (https://platform.openai.com/docs/api-reference/chat/object)
 * or its chunk stream, as OpenAI, Azure, DeepSeek, Groq, Mistral and xAI send them, read
 * into an ExpectedAnswer. Vendor variants read here: `reasoning_content` (DeepSeek, xAI) and
 * `reasoning` (Groq) beside `content`; Mistral's content arrays of `text` and `thinking`
 * parts; Groq's `executed_tools` and its usage under `x_groq`; an SSE `error` event.
 */
import { cite, emptyAnswer, parseArguments, type ExpectedAnswer, type ExpectedUsage, type Finish } from "./expected-answer";
import { sseJson } from "../../metering/metering-support";

const FINISH_REASONS: Readonly<Record<string, Finish>> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

/** `content` as a string, or Mistral's array of parts: returns [text, reasoning]. */
function contentOf(content: unknown): [string, string] {
  if (typeof content === "string") return [content, ""];
  if (!Array.isArray(content)) return ["", ""];
  let text = "";
  let reasoning = "";
  for (const part of content) {
    if (part?.type === "text") text += part.text ?? "";
    else if (part?.type === "thinking") {
      for (const inner of Array.isArray(part.thinking) ? part.thinking : []) if (inner?.type === "text") reasoning += inner.text ?? "";
    }
  }
  return [text, reasoning];
}

/**
 * Usage normalised: completion includes reasoning. Most vendors count reasoning inside
 * `completion_tokens`; xAI counts it outside, which `total_tokens` shows
 * (prompt + completion + reasoning).
 */
function usageOf(usage: any): ExpectedUsage | undefined {
  if (usage === undefined || usage === null) return undefined;
  const reasoning: number | undefined = usage.completion_tokens_details?.reasoning_tokens;
  const cacheRead: number | undefined = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens;
  let completion: number | undefined = usage.completion_tokens;
  if (completion !== undefined && reasoning !== undefined && reasoning > 0 && usage.total_tokens === usage.prompt_tokens + completion + reasoning) {
    completion += reasoning;
  }
  return {
    ...(usage.prompt_tokens === undefined ? {} : { prompt: usage.prompt_tokens }),
    ...(completion === undefined ? {} : { completion }),
    ...(reasoning === undefined ? {} : { reasoning }),
    ...(cacheRead === undefined ? {} : { cacheRead }),
  };
}

function readMessageExtras(message: any, answer: ExpectedAnswer): void {
  for (const annotation of message.annotations ?? []) cite(answer, annotation.url_citation?.url, "web");
  for (const tool of message.executed_tools ?? []) answer.serverTools.push(String(tool.type ?? "executed_tool"));
}

function readSync(body: any, answer: ExpectedAnswer): void {
  const choice = body.choices?.[0];
  const message = choice?.message ?? {};
  const [text, reasoning] = contentOf(message.content);
  answer.text = text;
  answer.reasoning = (message.reasoning_content ?? message.reasoning ?? "") + reasoning;
  for (const call of message.tool_calls ?? []) answer.toolCalls.push({ name: call.function.name, arguments: parseArguments(call.function.arguments) });
  readMessageExtras(message, answer);
  answer.finish = FINISH_REASONS[choice?.finish_reason] ?? "other";
  const usage = usageOf(body.usage);
  if (usage !== undefined) answer.usage = usage;
}

function readStream(bytes: string, answer: ExpectedAnswer): void {
  const calls: Array<{ name: string; arguments: string }> = [];
  for (const json of sseJson(bytes)) {
    if (json.error !== undefined) {
      answer.error = { message: json.error.message ?? "", statuses: typeof json.error.status_code === "number" ? [json.error.status_code] : [] };
      continue;
    }
    const usage = usageOf(json.usage ?? json.x_groq?.usage);
    if (usage !== undefined) answer.usage = usage;
    const choice = json.choices?.[0];
    if (choice === undefined) continue;
    const delta = choice.delta ?? {};
    const [text, reasoning] = contentOf(delta.content);
    answer.text += text;
    answer.reasoning += (delta.reasoning_content ?? delta.reasoning ?? "") + reasoning;
    (delta.tool_calls ?? []).forEach((call: any, position: number) => {
      const index = typeof call.index === "number" ? call.index : position;
      const entry = (calls[index] ??= { name: "", arguments: "" });
      if (entry.name === "" && typeof call.function?.name === "string") entry.name = call.function.name;
      entry.arguments += call.function?.arguments ?? "";
    });
    readMessageExtras(delta, answer);
    if (typeof choice.finish_reason === "string") answer.finish = FINISH_REASONS[choice.finish_reason] ?? "other";
  }
  for (const call of calls) if (call !== undefined) answer.toolCalls.push({ name: call.name, arguments: parseArguments(call.arguments) });
}

export function readOpenaiChat(bytes: string, mode: "sync" | "stream"): ExpectedAnswer {
  const answer = emptyAnswer();
  if (mode === "sync") readSync(JSON.parse(bytes), answer);
  else readStream(bytes, answer);
  if (answer.error !== undefined) answer.finish = "error";
  return answer;
}
