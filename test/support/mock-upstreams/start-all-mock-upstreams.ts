/** One mock per protocol, named after the catalog providers that point at them. */
import type { MockUpstream, StartMockUpstreamOptions } from "./mock-types";
import { startMockUpstream } from "./start-mock-upstream";

export interface MockUpstreamSet {
  /** openai-chat, catalog provider "mock-openai". */
  openai: MockUpstream;
  /** openai-responses, catalog provider "mock-responses". */
  responses: MockUpstream;
  /** anthropic-messages, catalog provider "mock-anthropic". */
  anthropic: MockUpstream;
  /** google-generate-content, catalog provider "mock-google". */
  google: MockUpstream;
  /** The four, in that order. */
  list: MockUpstream[];
  close(): Promise<void>;
}

/** Options apply to all four (same default scenario, same required key). */
export async function startAllMockUpstreams(options: StartMockUpstreamOptions = {}): Promise<MockUpstreamSet> {
  const [openai, responses, anthropic, google] = await Promise.all([
    startMockUpstream("openai-chat", options),
    startMockUpstream("openai-responses", options),
    startMockUpstream("anthropic-messages", options),
    startMockUpstream("google-generate-content", options),
  ]);
  const list = [openai, responses, anthropic, google];
  return {
    openai,
    responses,
    anthropic,
    google,
    list,
    async close() {
      await Promise.all(list.map((mock) => mock.close()));
    },
  };
}
