import { describe, expect, test } from "bun:test";
import type { ProtocolId } from "../../src/ir";
import { codecFor } from "../../src/translation/codec-registry";

/**
 * Fields a decoder does not map ride in extras back to a same-protocol upstream. Keys
 * named by Object.prototype members are such fields too: "__proto__" must not replace
 * an object's prototype (and vanish), "constructor" or "toString" must not be mistaken
 * for a field the encoder already wrote (and be dropped).
 */

const PROTOTYPE_KEYS = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

/** A minimal valid request of `protocol` as JSON text, with `extra` spliced in as top-level fields. */
function requestText(protocol: ProtocolId, extra: string): string {
  switch (protocol) {
    case "openai-chat":
      return `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],${extra}}`;
    case "openai-responses":
      return `{"model":"openai/gpt-4o-mini","input":"hi",${extra}}`;
    case "anthropic-messages":
      return `{"model":"anthropic/claude-haiku-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}],${extra}}`;
    case "google-generate-content":
      return `{"model":"google/gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"hi"}]}],${extra}}`;
  }
}

const PROTOCOLS: ProtocolId[] = ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"];

describe("unmapped fields named by Object.prototype members reach a same-protocol upstream", () => {
  for (const protocol of PROTOCOLS) {
    test(`${protocol}`, () => {
      const codec = codecFor(protocol);
      const extra = PROTOTYPE_KEYS.map((key, index) => `${JSON.stringify(key)}:{"field":${index}}`).join(",");
      const decoded = codec.decodeRequest(JSON.parse(requestText(protocol, extra))).value;
      const encoded = codec.encodeRequest(decoded, { providerModelId: "m", stream: false }).value;
      // As the upstream would read it.
      const sent = JSON.parse(JSON.stringify(encoded)) as Record<string, unknown>;
      for (const [index, key] of PROTOTYPE_KEYS.entries()) {
        expect({ key, own: Object.hasOwn(sent, key), value: Object.hasOwn(sent, key) ? sent[key] : undefined }).toEqual({ key, own: true, value: { field: index } });
      }
      expect(Object.getPrototypeOf(encoded)).toBe(Object.prototype);
    });
  }

  test("google-generate-content: the same inside generationConfig", () => {
    const codec = codecFor("google-generate-content");
    const decoded = codec.decodeRequest(JSON.parse(requestText("google-generate-content", `"generationConfig":{"temperature":0.5,"__proto__":{"a":1},"constructor":2}`))).value;
    const encoded = JSON.parse(JSON.stringify(codec.encodeRequest(decoded, { providerModelId: "m", stream: false }).value)) as { generationConfig: Record<string, unknown> };
    expect(encoded.generationConfig).toEqual(JSON.parse(`{"temperature":0.5,"__proto__":{"a":1},"constructor":2}`));
    expect(Object.hasOwn(encoded.generationConfig, "__proto__")).toBe(true);
  });
});
