/**
 * The public contract of the mock upstreams. Route, SDK and benchmark tests are written
 * against these types; keep them stable.
 */

/** Same literal set as `src/ir/protocol-id.ts`, restated so the mocks never import `src/`. */
export type UpstreamProtocol =
  | "openai-chat"
  | "openai-responses"
  | "anthropic-messages"
  | "google-generate-content";

export type MockScenarioKind =
  | "text"
  | "tool_call"
  | "parallel_tool_calls"
  | "reasoning"
  | "error"
  | "stream_cut"
  | "hang"
  | "slow"
  | "stream_error"
  | "flood";

export interface MockUsage {
  /** Prompt tokens, INCLUSIVE of cache reads and writes. */
  prompt: number;
  /** Completion tokens, INCLUSIVE of reasoning tokens. */
  completion: number;
  reasoning?: number;
  cacheRead?: number;
  /** Only Anthropic reports cache writes; the other wires have no field for it. */
  cacheWrite?: number;
}

export interface MockScenario {
  kind: MockScenarioKind;
  /** Default "Hello, world!". For tool kinds, text is only sent when set explicitly (a mixed turn). */
  text?: string;
  /** Default "get_weather". */
  toolName?: string;
  /** Default { location: "Paris" }. */
  toolArgs?: Record<string, unknown>;
  /** For kind "error": the HTTP status (400, 401, 403, 404, 429, 500, 503, 529, …). Default 500. */
  status?: number;
  /** Seconds, sent as `Retry-After` on error responses when set. */
  retryAfter?: number;
  /** Defaults prompt 12, completion 5 (reasoning 2 for kind "reasoning"). */
  usage?: MockUsage;
  /** Delay before the first byte (headers included). Kind "slow" defaults it to 1000 ms. */
  delayMs?: number;
  /** Delay between stream frames. */
  chunkDelayMs?: number;
  /**
   * Kind "stream_cut": reset the connection after this many frames (default: half of them;
   * never the terminal frame). 0 resets before the status line, like a network failure.
   * A non-streaming answer is cut halfway through its JSON body.
   */
  cutAfterChunks?: number;
  /**
   * Kind "stream_error": the frames sent before the vendor's mid-stream error frame
   * (default: half of them; never the terminal frame), after which the body ends cleanly.
   * Non-streaming answers are not affected (nor by "flood").
   */
  errorAfterChunks?: number;
  /** Kind "flood": how many times the text delta frame is sent (default 10,000, ~1 KB each). */
  floodFrames?: number;
  /** openai-chat streams: put `usage` in the `finish_reason` chunk instead of a `choices: []` chunk. */
  finalChunkHasChoicesAndUsage?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** URL path, e.g. "/v1/chat/completions" or "/v1beta/models/gemini-2.5-flash:streamGenerateContent". */
  path: string;
  /** Query string including the "?", or "" (e.g. "?alt=sse"). */
  search: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** Parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  body: unknown;
  /**
   * Bytes of a streamed answer handed to the server so far. The body is produced only as
   * the client reads it, so this shows how far a reader that stopped got the mock.
   */
  streamedBytes: number;
}

export interface MockUpstream {
  protocol: UpstreamProtocol;
  /** "http://127.0.0.1:PORT/v1" (openai-*, anthropic) or "http://127.0.0.1:PORT/v1beta" (google). */
  baseUrl: string;
  /** Every request received, in order (including rejected ones). */
  requests: RecordedRequest[];
  /** Default scenario for all following requests. */
  setScenario(scenario: MockScenario): void;
  /** One-shot scenarios consumed in order before falling back to the default. */
  queueScenarios(...scenarios: MockScenario[]): void;
  /** Stops the server, dropping open connections (hung and streaming requests included). */
  close(): Promise<void>;
}

export interface StartMockUpstreamOptions {
  scenario?: MockScenario;
  /** When set, requests must carry this key in the protocol's own header, else the vendor's 401. */
  apiKey?: string;
  /**
   * Where to listen: loopback and a free port unless set. A stand-in other containers call
   * (test/deploy/compose-stand-in.ts) listens on every address at a port its catalog names.
   */
  hostname?: string;
  port?: number;
}
