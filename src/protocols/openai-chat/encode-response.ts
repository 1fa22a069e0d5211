import type { CodecContext, Encoded, IrResponse, IrWarning } from "../../ir";
import { placeCitations, type PlacedCitation } from "../shared/citations";
import { droppedOutput, warnOnce } from "../shared/output-warnings";
import { encodeChatUsage } from "./convert-usage";
import { encodeChatFinishReason } from "./map-finish-reason";

/**
 * IrResponse -> client `chat.completion`. `content` is never null (some
 * clients crash on it), `id` is Switchyard's request id and `model` echoes the model the
 * client asked for, not the upstream that served it. Web citations become the message's
 * `url_citation` annotations, their spans shifted onto `content` (the text parts joined). A
 * chat message has no place for images, files, redacted (encrypted) reasoning, web searches
 * or document citations: those are dropped with a warning.
 */
export function encodeChatResponse(response: IrResponse, context: CodecContext): Encoded<Record<string, unknown>> {
  let text = "";
  let reasoning = "";
  const toolCalls: Array<Record<string, unknown>> = [];
  const annotations: Array<Record<string, unknown>> = [];
  const warnings: IrWarning[] = [];
  for (const part of response.content) {
    if (part.type === "text") {
      for (const citation of placeCitations(part.citations, text.length, part.text, warnings)) annotations.push(chatAnnotation(citation));
      text += part.text;
    } else if (part.type === "reasoning") {
      reasoning += part.text;
      if (part.redactedData !== undefined) warnOnce(warnings, REDACTED_REASONING);
    } else if (part.type === "tool_call") {
      toolCalls.push({ id: part.id, type: "function", function: { name: part.name, arguments: part.arguments } });
    } else if (part.type === "image" || part.type === "file") {
      warnOnce(warnings, droppedOutput(part.type, `chat completion messages carry no ${part.type === "image" ? "images" : "files"}`));
    } else if (part.type === "web_search") warnOnce(warnings, WEB_SEARCH);
  }
  const message: Record<string, unknown> = { role: "assistant", content: text };
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (annotations.length > 0) message.annotations = annotations;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;

  const body: Record<string, unknown> = {
    id: context.requestId,
    object: "chat.completion",
    created: context.created,
    model: context.model,
    choices: [{ index: 0, message, finish_reason: encodeChatFinishReason(response.finish, toolCalls.length > 0) }],
  };
  if (response.usage !== undefined) body.usage = encodeChatUsage(response.usage);
  return { value: body, warnings };
}

/** Anthropic's `redacted_thinking` is encrypted; only Anthropic can read it back. */
export const REDACTED_REASONING = droppedOutput("redacted_reasoning", "redacted (encrypted) reasoning has no chat completion form; not sent");

/** A chat completion has no item for a search the provider ran; what the answer cites of it still reaches the client. */
export const WEB_SEARCH = droppedOutput("web_search", "a web search the provider ran has no place in a chat completion; its citations are carried as annotations");

/**
 * A message annotation as OpenAI's search models send it (`ChatCompletionMessage.Annotation`):
 * every field is required, so a page without a title gets "".
 */
export function chatAnnotation(citation: PlacedCitation): Record<string, unknown> {
  return {
    type: "url_citation",
    url_citation: { end_index: citation.end, start_index: citation.start, title: citation.title ?? "", url: citation.url },
  };
}
