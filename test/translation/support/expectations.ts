/**
 * Shared expectations for the response and stream pair matrices: canonical usage
 * and how each client protocol renders it, and the finish reason table.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { IrFinishReason, IrUsage, ProtocolId } from "../../../src/ir";

/** Canonical usage: prompt inclusive of cache read+write, completion inclusive of reasoning. */
export interface CanonicalUsage {
  prompt: number;
  completion: number;
  reasoning?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface ExpectedCall {
  id: string;
  name: string;
  args: string;
}

export function readFixture(protocol: string, name: string): string {
  return readFileSync(join(import.meta.dir, "../../fixtures", protocol, name), "utf8");
}

/**
 * The usage object each client protocol must show for a canonical usage. Fields
 * listed here must be present with these values; the wire may carry more.
 */
export function expectedWireUsage(client: ProtocolId, usage: CanonicalUsage): Record<string, unknown> {
  const { prompt, completion, reasoning, cacheRead, cacheWrite } = usage;
  switch (client) {
    case "openai-chat":
      return {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        ...(cacheRead !== undefined ? { prompt_tokens_details: { cached_tokens: cacheRead } } : {}),
        ...(reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: reasoning } } : {}),
      };
    case "openai-responses":
      return {
        input_tokens: prompt,
        output_tokens: completion,
        total_tokens: prompt + completion,
        output_tokens_details: { reasoning_tokens: reasoning ?? 0 },
        ...(cacheRead !== undefined ? { input_tokens_details: { cached_tokens: cacheRead } } : {}),
      };
    case "anthropic-messages":
      return {
        // Anthropic input_tokens is exclusive of cache reads and writes.
        input_tokens: prompt - (cacheRead ?? 0) - (cacheWrite ?? 0),
        output_tokens: completion,
        ...(cacheRead !== undefined ? { cache_read_input_tokens: cacheRead } : {}),
        ...(cacheWrite !== undefined ? { cache_creation_input_tokens: cacheWrite } : {}),
      };
    case "google-generate-content":
      return {
        promptTokenCount: prompt,
        candidatesTokenCount: completion - (reasoning ?? 0),
        totalTokenCount: prompt + completion,
        ...(reasoning !== undefined ? { thoughtsTokenCount: reasoning } : {}),
        ...(cacheRead !== undefined ? { cachedContentTokenCount: cacheRead } : {}),
      };
  }
}

/** What a client's own decoder reads back from that wire: the buckets the client protocol can carry. */
export function expectedDecodedUsage(client: ProtocolId, usage: CanonicalUsage): CanonicalUsage {
  const out: CanonicalUsage = { prompt: usage.prompt, completion: usage.completion };
  if (client === "openai-chat" || client === "openai-responses") {
    if (usage.reasoning !== undefined || client === "openai-responses") out.reasoning = usage.reasoning ?? 0;
    if (usage.cacheRead !== undefined) out.cacheRead = usage.cacheRead;
    if (usage.cacheWrite !== undefined) out.cacheWrite = usage.cacheWrite;
  } else if (client === "anthropic-messages") {
    // Anthropic has no reasoning counter on this wire.
    if (usage.cacheRead !== undefined) out.cacheRead = usage.cacheRead;
    if (usage.cacheWrite !== undefined) out.cacheWrite = usage.cacheWrite;
  } else {
    // Gemini has no cache-write counter.
    if (usage.reasoning !== undefined) out.reasoning = usage.reasoning;
    if (usage.cacheRead !== undefined) out.cacheRead = usage.cacheRead;
  }
  return out;
}

export function canonicalOf(usage: IrUsage | undefined): CanonicalUsage | undefined {
  if (usage === undefined) return undefined;
  const out: CanonicalUsage = { prompt: usage.promptTokens ?? 0, completion: usage.completionTokens ?? 0 };
  if (usage.reasoningTokens !== undefined) out.reasoning = usage.reasoningTokens;
  if (usage.cacheReadTokens !== undefined) out.cacheRead = usage.cacheReadTokens;
  if (usage.cacheWriteTokens !== undefined) out.cacheWrite = usage.cacheWriteTokens;
  return out;
}

/** The wire finish value each client shows for a canonical reason (cross-protocol). */
export function expectedWireFinish(client: ProtocolId, reason: IrFinishReason): unknown {
  const table: Record<ProtocolId, Partial<Record<IrFinishReason, unknown>>> = {
    "openai-chat": { stop: "stop", length: "length", tool_calls: "tool_calls", content_filter: "content_filter" },
    "anthropic-messages": { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use", content_filter: "refusal" },
    "google-generate-content": { stop: "STOP", length: "MAX_TOKENS", tool_calls: "STOP", content_filter: "SAFETY" },
    "openai-responses": { stop: "completed", length: "incomplete", tool_calls: "completed", content_filter: "completed|incomplete" },
  };
  return table[client][reason];
}

/** Wraps `data` so a JSON string is a fixture "body" for translateResponse. */
export function jsonBody(value: unknown): string {
  return JSON.stringify(value);
}

export type { IrFinishReason };
