/**
 * An OpenAI chat completions client (the `openai` SDK): a completion, or a stream with
 * `stream_options.include_usage` (the only way a chat stream carries usage), deltas
 * accumulated as an application does (tool calls by index).
 */
import OpenAI from "openai";
import { addCitation, emptyView, parsedArguments, type ClientRequest, type ClientView } from "./client-view";

/** `content` as a string or an array of typed parts (as a vendor's relayed answer may have it): [text, reasoning]. */
function contentOf(content: unknown): [string, string] {
  if (typeof content === "string") return [content, ""];
  if (!Array.isArray(content)) return ["", ""];
  let text = "";
  let reasoning = "";
  for (const part of content) {
    if (part?.type === "text") text += part.text ?? "";
    else if (part?.type === "thinking") for (const inner of part.thinking ?? []) reasoning += inner?.text ?? "";
  }
  return [text, reasoning];
}

/** Reasoning rides in `reasoning_content` (the gateway, DeepSeek, xAI) or `reasoning` (Groq). */
function reasoningOf(message: any): string {
  return message?.reasoning_content ?? message?.reasoning ?? "";
}

export async function callOpenaiChat(request: ClientRequest): Promise<ClientView> {
  const view = emptyView("openai-chat");
  const openai = new OpenAI({ apiKey: request.apiKey, baseURL: `${request.baseUrl}/v1`, maxRetries: 0, timeout: 60_000 });
  const body = { model: request.model, messages: [{ role: "user" as const, content: request.prompt }], max_tokens: request.maxTokens };
  const options = { headers: { "x-request-id": request.requestId } };
  try {
    if (!request.stream) {
      const { data, response } = await openai.chat.completions.create(body, options).withResponse();
      view.warningsHeader = response.headers.get("x-switchyard-warnings");
      const choice = data.choices[0];
      const message: any = choice?.message ?? {};
      const [text, thinking] = contentOf(message.content);
      view.text = text;
      view.reasoning = reasoningOf(message) + thinking;
      for (const call of message.tool_calls ?? []) view.toolCalls.push({ name: call.function?.name, arguments: parsedArguments(call.function?.arguments) });
      for (const annotation of message.annotations ?? []) addCitation(view, annotation.url_citation?.url);
      // Groq's compound models list the tools they ran (a relayed Groq answer).
      for (const tool of message.executed_tools ?? []) view.serverTools.push(String(tool.type));
      if (choice?.finish_reason) view.finish = choice.finish_reason;
      if (data.usage) view.usage = data.usage;
      return view;
    }
    const { data, response } = await openai.chat.completions
      .create({ ...body, stream: true, stream_options: { include_usage: true } }, options)
      .withResponse();
    view.warningsHeader = response.headers.get("x-switchyard-warnings");
    const calls: Array<{ name: string; arguments: string }> = [];
    for await (const chunk of data) {
      if (chunk.usage) view.usage = chunk.usage;
      const choice: any = chunk.choices[0];
      if (choice === undefined) continue;
      const delta = choice.delta ?? {};
      const [text, thinking] = contentOf(delta.content);
      view.text += text;
      view.reasoning += reasoningOf(delta) + thinking;
      (delta.tool_calls ?? []).forEach((call: any, position: number) => {
        const entry = (calls[typeof call.index === "number" ? call.index : position] ??= { name: "", arguments: "" });
        if (entry.name === "" && call.function?.name) entry.name = call.function.name;
        entry.arguments += call.function?.arguments ?? "";
      });
      for (const annotation of delta.annotations ?? []) addCitation(view, annotation.url_citation?.url);
      if (choice.finish_reason) view.finish = choice.finish_reason;
    }
    for (const call of calls) if (call !== undefined) view.toolCalls.push({ name: call.name, arguments: parsedArguments(call.arguments) });
    return view;
  } catch (error) {
    if (!(error instanceof OpenAI.APIError)) throw error;
    view.ok = false;
    view.error = { ...(error.status === undefined ? {} : { status: error.status }), message: error.message };
    return view;
  }
}
