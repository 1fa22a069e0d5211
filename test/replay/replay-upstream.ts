/**
 * The replay upstream: one loopback server (`Bun.serve`, port 0) that answers the gateway's
 * upstream calls on every vendor path (`/v1/chat/completions`, `/v1/responses`,
 * `/v1/messages`, `/v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`) with a recording's bytes. The upstream model id is the
 * recording's id (replay-catalog.ts). Routes, credentials and each vendor's response
 * headers are the mock upstreams' (test/support/mock-upstreams); only the answer differs.
 *
 * A call that does not fit its recording (another protocol's path, a stream asked of a
 * body or the reverse, an unknown model) is answered with a vendor 400 naming why, so the
 * cell fails on it instead of replaying something else. A stream is sent in pieces cut at
 * seeded random byte offsets (mid-line, mid-character), as networks deliver it.
 */
import { anthropicMessagesMock } from "../support/mock-upstreams/anthropic-messages-mock";
import { googleGenerateContentMock } from "../support/mock-upstreams/google-generate-content-mock";
import { isJsonObject, type MockProtocol } from "../support/mock-upstreams/mock-protocol";
import { openaiChatMock } from "../support/mock-upstreams/openai-chat-mock";
import { openaiResponsesMock } from "../support/mock-upstreams/openai-responses-mock";
import { vendorErrorResponse } from "../support/mock-upstreams/vendor-errors";
import type { Recording } from "./recording";

const WIRES: readonly MockProtocol[] = [openaiChatMock, openaiResponsesMock, anthropicMessagesMock, googleGenerateContentMock];

export interface ReplayedCall {
  recordingId: string;
  path: string;
  stream: boolean;
}

export interface ReplayUpstream {
  /** "http://127.0.0.1:PORT": providers add "/v1" (or "/v1beta" for Gemini). */
  origin: string;
  /** Every call answered with a recording. */
  calls: ReplayedCall[];
  close(): Promise<void>;
}

/** A small deterministic generator (mulberry32), seeded by the recording id, so a failing split can be replayed. */
function seededRandom(seed: string): () => number {
  let state = [...seed].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0, 2166136261);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The bytes cut into pieces of 1 to 512 bytes. Bytes, not characters (as
 * test/support/split-chunks.ts cuts text): a multi-byte character is split as a network
 * splits it, and no character is altered by cutting a UTF-16 pair.
 */
export function bytePieces(bytes: Uint8Array, seed: string): Uint8Array[] {
  const random = seededRandom(seed);
  const pieces: Uint8Array[] = [];
  for (let start = 0; start < bytes.length; ) {
    const size = 1 + Math.floor(random() * 512);
    pieces.push(bytes.subarray(start, start + size));
    start += size;
  }
  return pieces;
}

function piecewiseBody(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces[index++];
      if (piece === undefined) controller.close();
      else controller.enqueue(piece);
    },
  });
}

export function startReplayUpstream(recordings: readonly Recording[], apiKey: string): ReplayUpstream {
  const byId = new Map(recordings.map((recording) => [recording.id, recording]));
  const encoded = new Map<string, Uint8Array>();
  const calls: ReplayedCall[] = [];

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const text = await request.text();
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const fields = isJsonObject(body) ? body : {};
    for (const wire of WIRES) {
      const route = wire.matchRoute(request.method, url.pathname, url.searchParams, fields);
      if (route === undefined) continue;
      const refuse = (message: string) => vendorErrorResponse(wire.protocol, { status: 400, message: `replay upstream: ${message}` });
      const rejection = wire.rejectRequest(request.headers, apiKey);
      if (rejection !== undefined) return vendorErrorResponse(wire.protocol, rejection);
      const recording = byId.get(route.model ?? "");
      if (recording === undefined) return refuse(`no recording ${JSON.stringify(route.model)}`);
      if (recording.protocol !== wire.protocol) return refuse(`${recording.id} is a ${recording.protocol} recording, called on ${url.pathname}`);
      if (route.stream !== (recording.mode === "stream") || route.jsonArrayStream === true) {
        return refuse(`${recording.id} is a ${recording.mode} recording, asked for ${route.stream ? "a stream" : "a body"}${url.search}`);
      }
      calls.push({ recordingId: recording.id, path: url.pathname, stream: route.stream });
      if (!route.stream) return new Response(recording.bytes, { headers: wire.responseHeaders() });
      let bytes = encoded.get(recording.id);
      if (bytes === undefined) encoded.set(recording.id, (bytes = new TextEncoder().encode(recording.bytes)));
      return new Response(piecewiseBody(bytePieces(bytes, recording.id)), { headers: wire.streamHeaders() });
    }
    return new Response(JSON.stringify({ error: { message: `replay upstream: no route ${request.method} ${url.pathname}` } }), {
      status: 404,
      headers: { "content-type": "application/json" },
    });
  }

  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handle });
  return {
    origin: `http://127.0.0.1:${server.port}`,
    calls,
    async close() {
      await server.stop(true);
    },
  };
}
