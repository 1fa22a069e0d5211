/**
 * A Gemini `GenerateContentResponse` (https://ai.google.dev/api/generate-content#generatecontentresponse),
 * or the SSE stream of them (`:streamGenerateContent?alt=sse`), read into an ExpectedAnswer:
 * parts concatenated across chunks, the last finish reason and usage.
 */
import { cite, emptyAnswer, type ExpectedAnswer, type ExpectedUsage, type Finish } from "./expected-answer";
import { sseJson } from "../../metering/metering-support";

/** https://ai.google.dev/api/generate-content#FinishReason */
const FINISH_REASONS: Readonly<Record<string, Finish>> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
};

/**
 * https://ai.google.dev/api/generate-content#UsageMetadata: `promptTokenCount` includes
 * cached content; `candidatesTokenCount` excludes thoughts; the prompt of a grounded
 * answer's tool use (`toolUsePromptTokenCount`) is input too (it is in `totalTokenCount`).
 */
function usageOf(usage: any): ExpectedUsage | undefined {
  if (usage === undefined || usage === null || usage.promptTokenCount === undefined) return undefined;
  const thoughts: number | undefined = usage.thoughtsTokenCount;
  return {
    prompt: usage.promptTokenCount + (usage.toolUsePromptTokenCount ?? 0),
    completion: (usage.candidatesTokenCount ?? 0) + (thoughts ?? 0),
    ...(thoughts === undefined ? {} : { reasoning: thoughts }),
    ...(usage.cachedContentTokenCount === undefined ? {} : { cacheRead: usage.cachedContentTokenCount }),
  };
}

function readChunk(chunk: any, answer: ExpectedAnswer, state: { finishReason?: string; blocked?: boolean }): void {
  const usage = usageOf(chunk.usageMetadata);
  if (usage !== undefined) answer.usage = usage;
  if (chunk.promptFeedback?.blockReason !== undefined) state.blocked = true;
  const candidate = chunk.candidates?.[0];
  if (candidate === undefined) return;
  for (const part of candidate.content?.parts ?? []) {
    if (typeof part.thoughtSignature === "string" && part.thoughtSignature !== "") answer.signedReasoning = true;
    if (typeof part.text === "string") {
      if (part.thought === true) answer.reasoning += part.text;
      else answer.text += part.text;
    } else if (part.functionCall !== undefined) answer.toolCalls.push({ name: part.functionCall.name, arguments: part.functionCall.args ?? {} });
    else if (part.executableCode !== undefined) answer.serverTools.push("code_execution");
  }
  const grounding = candidate.groundingMetadata;
  if (grounding !== undefined) {
    if ((grounding.webSearchQueries ?? []).length > 0 && !answer.serverTools.includes("google_search")) answer.serverTools.push("google_search");
    const supported = new Set<number>((grounding.groundingSupports ?? []).flatMap((support: any) => support.groundingChunkIndices ?? []));
    (grounding.groundingChunks ?? []).forEach((chunk: any, index: number) => {
      cite(answer, chunk.web?.uri ?? chunk.retrievedContext?.uri ?? chunk.retrievedContext?.title, chunk.web === undefined ? "document" : supported.has(index) ? "web" : "found");
    });
  }
  const urls = candidate.urlContextMetadata?.urlMetadata ?? [];
  if (urls.length > 0 && !answer.serverTools.includes("url_context")) answer.serverTools.push("url_context");
  for (const entry of urls) cite(answer, entry.retrievedUrl, "read-page");
  if (typeof candidate.finishReason === "string") state.finishReason = candidate.finishReason;
}

export function readGoogleGenerateContent(bytes: string, mode: "sync" | "stream"): ExpectedAnswer {
  const answer = emptyAnswer();
  const state: { finishReason?: string; blocked?: boolean } = {};
  const chunks = mode === "sync" ? [JSON.parse(bytes)] : sseJson(bytes);
  for (const chunk of chunks) readChunk(chunk, answer, state);
  if (state.blocked === true) answer.finish = "content_filter";
  else if (state.finishReason === "STOP" && answer.toolCalls.length > 0) answer.finish = "tool_calls";
  else answer.finish = state.finishReason === undefined ? "other" : (FINISH_REASONS[state.finishReason] ?? "other");
  return answer;
}
