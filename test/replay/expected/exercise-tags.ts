/**
 * The exercise tags a recording's bytes show, from its ExpectedAnswer: what its meta file
 * must declare (replay.test.ts checks both ways). `structured-output` is the one tag the
 * bytes cannot show (it is the request's response format), so it is declared by hand.
 */
import type { ExerciseTag, Recording } from "../recording";
import type { ExpectedAnswer } from "./expected-answer";

function isEmptyObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** Mistral's chat `content` as an array of typed parts, in a message or a delta. */
function hasContentArray(recording: Recording): boolean {
  return recording.protocol === "openai-chat" && /"content"\s*:\s*\[/.test(recording.bytes);
}

export function exerciseTags(recording: Recording, answer: ExpectedAnswer): ExerciseTag[] {
  const tags: ExerciseTag[] = [];
  const add = (condition: boolean, tag: ExerciseTag) => {
    if (condition) tags.push(tag);
  };
  add(answer.text !== "", "text");
  add(answer.toolCalls.length === 0, "tools:none");
  add(answer.toolCalls.length === 1, "tools:one");
  add(answer.toolCalls.length > 1, "tools:parallel");
  add(answer.toolCalls.some((call) => isEmptyObject(call.arguments)), "tools:no-arguments");
  const reasoned = answer.reasoning !== "";
  add(reasoned && !answer.signedReasoning && !answer.summarizedReasoning, "reasoning:plain");
  add(reasoned && answer.signedReasoning, "reasoning:signed");
  add(answer.redactedReasoning > 0, "reasoning:redacted");
  add(reasoned && answer.summarizedReasoning, "reasoning:summarized");
  add(answer.serverTools.length > 0, "server-tools");
  add(answer.citations.length > 0, "citations");
  add((answer.usage?.cacheRead ?? 0) > 0 || (answer.usage?.cacheWrite ?? 0) > 0, "cache-usage");
  add(answer.finish === "content_filter", "refusal");
  add(answer.finish === "length", "stop:length");
  add(answer.error !== undefined, "error:in-stream");
  add(answer.hostedCalls.length > 0, "hosted-call");
  add(hasContentArray(recording), "content-array");
  return tags;
}
