/**
 * Gemini streaming. With `alt=sse`: one `data: <GenerateContentResponse>` per chunk,
 * lines ended by CRLF as Google sends them, no `[DONE]`. Without it: one JSON array whose
 * elements are the same chunks, written as they come.
 * https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent
 *
 * Thoughts and text stream in pieces (`thought: true` on reasoning parts); function calls
 * arrive whole, all in one chunk. Every chunk carries `usageMetadata` with running totals;
 * only the last carries `finishReason`.
 */
import { googleModelVersion } from "./echoed-model";
import {
  GOOGLE_FINISH_REASONS,
  functionCallParts,
  googleUsageMetadata,
  textPart,
  thoughtPart,
} from "./google-generate-content-parts";
import { mockIds } from "./mock-ids";
import type { JsonObject, MockCall } from "./mock-protocol";
import type { ResolvedScenario } from "./resolve-scenario";
import { sseData } from "./sse-frames";
import { cumulativeCounts, splitIntoWords } from "./split-pieces";

export function renderGoogleGenerateContentStream(scenario: ResolvedScenario, call: MockCall): string[] {
  const thoughtChunks = splitIntoWords(scenario.reasoningText).map((piece) => [thoughtPart(piece)]);
  const answerChunks = splitIntoWords(scenario.text).map((piece) => [textPart(piece)]);
  const calls = functionCallParts(scenario);
  if (calls.length > 0) answerChunks.push(calls);
  if (thoughtChunks.length + answerChunks.length === 0) answerChunks.push([textPart("")]);

  // Running totals: thoughts grow over the thought chunks, candidates over the answer
  // chunks; the last chunk always carries the exact totals.
  const usage = scenario.usage;
  const candidates = usage.completion - usage.reasoning;
  const thoughtsSoFar = cumulativeCounts(usage.reasoning, thoughtChunks.length);
  const candidatesSoFar = cumulativeCounts(candidates, answerChunks.length);
  const totals = [
    ...thoughtsSoFar.map((thoughts) => ({ thoughts, candidates: 0 })),
    ...candidatesSoFar.map((answer) => ({ thoughts: usage.reasoning, candidates: answer })),
  ];
  const allChunks = [...thoughtChunks, ...answerChunks];
  const modelVersion = googleModelVersion(call.model);
  const responseId = mockIds.googleResponse();
  const chunks = allChunks.map((parts, index) => {
    const last = index === allChunks.length - 1;
    const candidate: JsonObject = { content: { parts, role: "model" } };
    if (last) candidate.finishReason = GOOGLE_FINISH_REASONS[scenario.finish];
    candidate.index = 0;
    const soFar = last ? { thoughts: usage.reasoning, candidates } : (totals[index] ?? { thoughts: 0, candidates: 0 });
    return {
      candidates: [candidate],
      usageMetadata: googleUsageMetadata(usage.prompt, soFar.thoughts + soFar.candidates, soFar.thoughts, usage.cacheRead),
      modelVersion,
      responseId,
    };
  });

  if (call.jsonArrayStream === true) {
    return chunks.map((chunk, index) => `${index === 0 ? "[" : ",\r\n"}${JSON.stringify(chunk)}`).concat("]");
  }
  return chunks.map((chunk) => sseData(chunk, "\r\n"));
}
