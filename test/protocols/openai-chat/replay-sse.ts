import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CodecContext, IrStreamPart, StreamDecoder, StreamEncoder } from "../../../src/ir";
import { SseParser, type SseEvent } from "../../../src/protocols/sse";

/** Test support shared by the OpenAI codec tests: fixture loading and SSE replay. */
export function readFixture(protocol: string, name: string): string {
  return readFileSync(join(import.meta.dir, "../../fixtures", protocol, name), "utf8");
}

export function readJsonFixture(protocol: string, name: string): unknown {
  return JSON.parse(readFixture(protocol, name));
}

/** Feeds text pieces through a fresh SseParser and decoder, the way bytes arrive from a socket. */
export function decodePieces(decoder: StreamDecoder, pieces: string[]): IrStreamPart[] {
  const parser = new SseParser();
  const parts: IrStreamPart[] = [];
  for (const piece of pieces) for (const event of parser.push(piece)) parts.push(...decoder.push(event));
  for (const event of parser.end()) parts.push(...decoder.push(event));
  parts.push(...decoder.end());
  return parts;
}

export function parseEvents(text: string): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(text), ...parser.end()];
}

export function encodeAll(encoder: StreamEncoder, parts: IrStreamPart[]): string {
  let out = "";
  for (const part of parts) out += encoder.push(part);
  return out + encoder.end();
}

export function types(parts: IrStreamPart[]): string[] {
  return parts.map((part) => part.type);
}

/** Concatenated payloads, to compare streams whose delta boundaries differ. */
export function collect(parts: IrStreamPart[]): { text: string; reasoning: string; toolArguments: Record<number, string> } {
  const result = { text: "", reasoning: "", toolArguments: {} as Record<number, string> };
  for (const part of parts) {
    if (part.type === "text_delta") result.text += part.text;
    else if (part.type === "reasoning_delta") result.reasoning += part.text;
    else if (part.type === "tool_call_delta") result.toolArguments[part.index] = (result.toolArguments[part.index] ?? "") + part.argumentsDelta;
  }
  return result;
}

export function testContext(): CodecContext {
  let next = 0;
  return { requestId: "req_01HZX3K9Q4", model: "openai/gpt-4.1-mini", created: 1747150000, newId: (prefix) => `${prefix}_${next++}` };
}
