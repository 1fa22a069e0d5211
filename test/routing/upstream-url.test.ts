import { describe, expect, test } from "bun:test";
import { upstreamUrl, type UpstreamTarget } from "../../src/routing/upstream-request";

const target = (baseUrl: string, protocol: UpstreamTarget["protocol"] = "openai-chat"): UpstreamTarget => ({ protocol, baseUrl, providerModelId: "m/1", apiKey: "k" });

describe("upstreamUrl", () => {
  test("each protocol's path follows the base, whose trailing slashes are dropped", () => {
    expect(upstreamUrl(target("https://api.example.com/v1"), false)).toBe("https://api.example.com/v1/chat/completions");
    expect(upstreamUrl(target("https://api.example.com/v1///"), false)).toBe("https://api.example.com/v1/chat/completions");
    expect(upstreamUrl(target("https://api.example.com/v1/", "openai-responses"), true)).toBe("https://api.example.com/v1/responses");
    expect(upstreamUrl(target("https://api.example.com/", "anthropic-messages"), true)).toBe("https://api.example.com/messages");
    expect(upstreamUrl(target("https://g.example.com/v1beta/", "google-generate-content"), true)).toBe("https://g.example.com/v1beta/models/m%2F1:streamGenerateContent?alt=sse");
  });

  test("a customer's base whose path is a run of slashes and then text keeps them all", () => {
    const base = `https://api.example.com/${"/".repeat(2000)}x`;
    expect(upstreamUrl(target(base), false)).toBe(`${base}/chat/completions`);
    expect(upstreamUrl(target(`${base}${"/".repeat(5)}`), false)).toBe(`${base}/chat/completions`);
  });
});
