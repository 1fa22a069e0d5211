/**
 * One vendor stand-in on loopback (`Bun.serve`, port 0, unless the options say otherwise). Every request is recorded, then:
 * unknown route → 404, bad credentials → 401, missing `anthropic-version` → 400, body not
 * a JSON object or no model → 400 (all in the vendor's error envelope); otherwise the
 * scenario is chosen — "@kind" suffix of the model id (scenario-from-model.ts), else the
 * next queued scenario, else the default — and played.
 */
import { anthropicMessagesMock } from "./anthropic-messages-mock";
import { googleGenerateContentMock } from "./google-generate-content-mock";
import { isJsonObject, type MockCall, type MockProtocol } from "./mock-protocol";
import type {
  MockScenario,
  MockUpstream,
  RecordedRequest,
  StartMockUpstreamOptions,
  UpstreamProtocol,
} from "./mock-types";
import { openaiChatMock } from "./openai-chat-mock";
import { openaiResponsesMock } from "./openai-responses-mock";
import { RequestWaits } from "./request-waits";
import { resolveScenario, type ResolvedScenario } from "./resolve-scenario";
import { scenarioFromModel } from "./scenario-from-model";
import { floodFrames } from "./flood-frames";
import { streamErrorFrame } from "./stream-error-frame";
import { streamedBody } from "./streamed-body";
import { vendorErrorResponse } from "./vendor-errors";

const WIRES: Readonly<Record<UpstreamProtocol, MockProtocol>> = {
  "openai-chat": openaiChatMock,
  "openai-responses": openaiResponsesMock,
  "anthropic-messages": anthropicMessagesMock,
  "google-generate-content": googleGenerateContentMock,
};

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Splits a JSON body in two so that "stream_cut" can drop a non-streaming answer midway. */
function halves(text: string): string[] {
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

function play(wire: MockProtocol, scenario: ResolvedScenario, call: MockCall, onBytes: (bytes: number) => void): Response {
  if (scenario.kind === "error") {
    return vendorErrorResponse(wire.protocol, { status: scenario.status, retryAfter: scenario.retryAfter });
  }
  const frames = call.stream
    ? wire.renderStream(scenario, call)
    : halves(JSON.stringify(wire.renderResponse(scenario, call)));
  const headers = call.stream && call.jsonArrayStream !== true ? wire.streamHeaders() : wire.responseHeaders();
  if (scenario.kind === "stream_cut") {
    // Never reach the terminal frame, whatever cutAfterChunks says.
    const cutAfter = Math.min(scenario.cutAfterChunks ?? Math.floor(frames.length / 2), frames.length - 1);
    return streamedBody(frames, { headers, chunkDelayMs: scenario.chunkDelayMs, cutAfter, onBytes });
  }
  if (!call.stream) return new Response(frames.join(""), { headers });
  if (scenario.kind === "stream_error") {
    const sent = frames.slice(0, Math.min(scenario.errorAfterChunks ?? Math.floor(frames.length / 2), frames.length - 1));
    const closing = call.jsonArrayStream === true ? ["]"] : [];
    return streamedBody([...sent, streamErrorFrame(wire.protocol, sent, call.jsonArrayStream === true), ...closing], {
      headers,
      chunkDelayMs: scenario.chunkDelayMs,
      onBytes,
    });
  }
  if (scenario.kind === "flood") return streamedBody(floodFrames(frames, scenario.floodFrames), { headers, chunkDelayMs: scenario.chunkDelayMs, onBytes });
  return streamedBody(frames, { headers, chunkDelayMs: scenario.chunkDelayMs, onBytes });
}

export async function startMockUpstream(
  protocol: UpstreamProtocol,
  options: StartMockUpstreamOptions = {},
): Promise<MockUpstream> {
  const wire = WIRES[protocol];
  const requests: RecordedRequest[] = [];
  const queue: MockScenario[] = [];
  const waits = new RequestWaits();
  let defaultScenario: MockScenario = options.scenario ?? { kind: "text" };

  const error = (status: number, message?: string) => vendorErrorResponse(protocol, { status, message });

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const text = await request.text();
    const parsed = parseBody(text);
    const recorded: RecordedRequest = {
      method: request.method,
      path: url.pathname,
      search: url.search,
      headers: Object.fromEntries(request.headers.entries()),
      body: parsed,
      streamedBytes: 0,
    };
    requests.push(recorded);

    const body = isJsonObject(parsed) ? parsed : {};
    const route = wire.matchRoute(request.method, url.pathname, url.searchParams, body);
    if (route === undefined) return error(404, `Invalid URL (${request.method} ${url.pathname})`);
    const rejection = wire.rejectRequest(request.headers, options.apiKey);
    if (rejection !== undefined) return vendorErrorResponse(protocol, rejection);
    if (!isJsonObject(parsed)) return error(400, "The request body is not valid JSON.");
    if (route.model === undefined || route.model === "") return error(400, "you must provide a model parameter");

    const selector = scenarioFromModel(route.model);
    const scenario: MockScenario =
      selector.selected !== undefined ? { ...defaultScenario, ...selector.selected } : (queue.shift() ?? defaultScenario);
    const resolved = resolveScenario(scenario, wire.maxTokens(body));
    const call: MockCall = {
      model: selector.baseModel,
      stream: route.stream,
      body,
      ...(route.jsonArrayStream === undefined ? {} : { jsonArrayStream: route.jsonArrayStream }),
    };

    if (resolved.delayMs > 0) await waits.wait(resolved.delayMs, request.signal);
    // "hang": hold the request without a byte until the client leaves or the mock closes.
    if (resolved.kind === "hang") await waits.wait(Number.POSITIVE_INFINITY, request.signal);
    // The client is gone: Bun discards this response.
    if (request.signal.aborted || resolved.kind === "hang") return new Response(null, { status: 499 });
    return play(wire, resolved, call, (bytes) => (recorded.streamedBytes += bytes));
  }

  const server = Bun.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: options.port ?? 0,
    // No idle timeout: "hang" and slow streams must stay open until the client gives up.
    idleTimeout: 0,
    async fetch(request) {
      try {
        return await handle(request);
      } catch (cause) {
        return error(500, `mock upstream failure: ${String(cause)}`);
      }
    },
  });

  return {
    protocol,
    baseUrl: `http://127.0.0.1:${server.port}${wire.basePath}`,
    requests,
    setScenario(scenario) {
      defaultScenario = scenario;
    },
    queueScenarios(...scenarios) {
      queue.push(...scenarios);
    },
    async close() {
      waits.releaseAll();
      await server.stop(true);
    },
  };
}
