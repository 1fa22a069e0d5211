/**
 * A Gemini client (`@google/genai`): a response's parts, or a stream's chunks concatenated
 * (the last finish reason and usage win), grounding read as citations.
 */
import { ApiError, GoogleGenAI } from "@google/genai";
import { addCitation, emptyView, type ClientRequest, type ClientView } from "./client-view";

function readChunk(view: ClientView, chunk: any): void {
  const headers = chunk.sdkHttpResponse?.headers as Record<string, string> | undefined;
  if (headers?.["x-switchyard-warnings"] !== undefined) view.warningsHeader = headers["x-switchyard-warnings"];
  if (chunk.usageMetadata) view.usage = chunk.usageMetadata;
  const candidate = chunk.candidates?.[0];
  if (candidate === undefined) return;
  for (const part of candidate.content?.parts ?? []) {
    if (typeof part.text === "string") {
      if (part.thought === true) view.reasoning += part.text;
      else view.text += part.text;
    } else if (part.functionCall) view.toolCalls.push({ name: part.functionCall.name, arguments: part.functionCall.args ?? {} });
    else if (part.executableCode && !view.serverTools.includes("code_execution")) view.serverTools.push("code_execution");
  }
  const grounding = candidate.groundingMetadata;
  if ((grounding?.webSearchQueries ?? []).length > 0 && !view.serverTools.includes("google_search")) view.serverTools.push("google_search");
  for (const source of grounding?.groundingChunks ?? []) addCitation(view, source.web?.uri ?? source.retrievedContext?.uri ?? source.retrievedContext?.title);
  const urls = candidate.urlContextMetadata?.urlMetadata ?? [];
  if (urls.length > 0 && !view.serverTools.includes("url_context")) view.serverTools.push("url_context");
  for (const entry of urls) addCitation(view, entry.retrievedUrl);
  if (candidate.finishReason) view.finish = candidate.finishReason;
}

export async function callGoogleGenerateContent(request: ClientRequest): Promise<ClientView> {
  const view = emptyView("google-generate-content");
  const google = new GoogleGenAI({ apiKey: request.apiKey, httpOptions: { baseUrl: request.baseUrl, timeout: 60_000 } });
  const call = {
    model: request.model,
    contents: request.prompt,
    config: { maxOutputTokens: request.maxTokens, httpOptions: { headers: { "x-request-id": request.requestId } } },
  };
  try {
    if (!request.stream) {
      readChunk(view, await google.models.generateContent(call));
      return view;
    }
    for await (const chunk of await google.models.generateContentStream(call)) readChunk(view, chunk);
    return view;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    view.ok = false;
    // The SDK's message is the error body (after "got status: …. " for a stream's error frame).
    const json = error.message.slice(error.message.indexOf("{"));
    let message = error.message;
    try {
      message = (JSON.parse(json) as { error: { message: string } }).error.message;
    } catch {
      // not a JSON body: keep the SDK's message
    }
    view.error = { status: error.status, message };
    return view;
  }
}
