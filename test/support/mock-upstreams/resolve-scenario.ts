/**
 * Fills a scenario's defaults and decides what the turn contains, once, so that the four
 * protocol encoders render the same turn (same text, calls and token counts).
 */
import { DEFAULT_FLOOD_FRAMES, FLOOD_TEXT } from "./flood-frames";
import type { MockScenario, MockScenarioKind } from "./mock-types";

export const DEFAULT_TEXT = "Hello, world!";
export const DEFAULT_TOOL_NAME = "get_weather";
export const DEFAULT_TOOL_ARGS: Readonly<Record<string, unknown>> = { location: "Paris" };
/** Arguments of the second call of "parallel_tool_calls" when toolArgs is not given. */
export const DEFAULT_SECOND_TOOL_ARGS: Readonly<Record<string, unknown>> = { location: "Tokyo" };
export const REASONING_TEXT = "The user greets me. I will greet them back briefly.";
export const DEFAULT_ERROR_STATUS = 500;
export const DEFAULT_SLOW_DELAY_MS = 1000;

export interface MockToolCall {
  name: string;
  args: Record<string, unknown>;
  /** `JSON.stringify(args)`: the exact string streamed in fragments. */
  argsJson: string;
}

/** "stop" | "tool_calls" | "length", mapped to each wire's own finish vocabulary. */
export type MockFinish = "stop" | "tool_calls" | "length";

export interface ResolvedUsage {
  prompt: number;
  completion: number;
  reasoning: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface ResolvedScenario {
  kind: MockScenarioKind;
  /** Answer text; "" when the turn has none (tool-only turns). */
  text: string;
  /** Reasoning text; "" unless kind is "reasoning". */
  reasoningText: string;
  toolCalls: MockToolCall[];
  finish: MockFinish;
  usage: ResolvedUsage;
  status: number;
  retryAfter: number | undefined;
  delayMs: number;
  chunkDelayMs: number;
  cutAfterChunks: number | undefined;
  errorAfterChunks: number | undefined;
  floodFrames: number;
  finalChunkHasChoicesAndUsage: boolean;
}

function toolCall(name: string, args: Record<string, unknown>): MockToolCall {
  return { name, args, argsJson: JSON.stringify(args) };
}

/**
 * @param maxTokens the request's output limit (max_tokens, max_output_tokens, …): when it
 *   is below the completion tokens the turn ends with "length" and is billed at the limit.
 */
export function resolveScenario(scenario: MockScenario, maxTokens: number | undefined): ResolvedScenario {
  const kind = scenario.kind;
  const isToolKind = kind === "tool_call" || kind === "parallel_tool_calls";
  const name = scenario.toolName ?? DEFAULT_TOOL_NAME;
  const toolCalls: MockToolCall[] = [];
  if (isToolKind) toolCalls.push(toolCall(name, { ...(scenario.toolArgs ?? DEFAULT_TOOL_ARGS) }));
  if (kind === "parallel_tool_calls") {
    toolCalls.push(toolCall(name, { ...(scenario.toolArgs ?? DEFAULT_SECOND_TOOL_ARGS) }));
  }

  const prompt = scenario.usage?.prompt ?? 12;
  let completion = scenario.usage?.completion ?? 5;
  // Reasoning is part of the completion on every wire: never more than it.
  let reasoning = Math.min(scenario.usage?.reasoning ?? (kind === "reasoning" ? 2 : 0), completion);
  let finish: MockFinish = isToolKind ? "tool_calls" : "stop";
  if (!isToolKind && maxTokens !== undefined && maxTokens < completion) {
    finish = "length";
    completion = maxTokens;
    reasoning = Math.min(reasoning, completion);
  }

  return {
    kind,
    text: isToolKind ? (scenario.text ?? "") : (scenario.text ?? (kind === "flood" ? FLOOD_TEXT : DEFAULT_TEXT)),
    reasoningText: kind === "reasoning" ? REASONING_TEXT : "",
    toolCalls,
    finish,
    usage: {
      prompt,
      completion,
      reasoning,
      cacheRead: scenario.usage?.cacheRead ?? 0,
      cacheWrite: scenario.usage?.cacheWrite ?? 0,
    },
    status: scenario.status ?? DEFAULT_ERROR_STATUS,
    retryAfter: scenario.retryAfter,
    delayMs: scenario.delayMs ?? (kind === "slow" ? DEFAULT_SLOW_DELAY_MS : 0),
    chunkDelayMs: scenario.chunkDelayMs ?? 0,
    cutAfterChunks: scenario.cutAfterChunks,
    errorAfterChunks: scenario.errorAfterChunks,
    floodFrames: scenario.floodFrames ?? DEFAULT_FLOOD_FRAMES,
    finalChunkHasChoicesAndUsage: scenario.finalChunkHasChoicesAndUsage ?? false,
  };
}
