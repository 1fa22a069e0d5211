import { readFileSync } from "node:fs";
import type { CodecContext, IrStreamPart, StreamDecoder } from "../../../src/ir";
import { SseParser, type SseEvent } from "../../../src/protocols/sse";

/** Feeds text pieces through an SseParser into a stream decoder, the way the router does. */
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

export function readFixture(name: string): string {
  return readFileSync(`${import.meta.dir}/../../fixtures/anthropic-messages/${name}`, "utf8");
}

export function readJsonFixture(name: string): Record<string, unknown> {
  return JSON.parse(readFixture(name));
}

export const CONTEXT: CodecContext = {
  requestId: "req_7f3a",
  model: "anthropic/claude-sonnet-4.5",
  created: 1_760_000_000,
  newId: (prefix) => `${prefix}_1`,
};
