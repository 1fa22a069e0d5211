import { expect, test } from "bun:test";
import { convertGeminiUsage } from "../../../src/protocols/google-generate-content/convert-usage";

// Usage objects as Gemini sends them (the replay corpus has the whole answers: google-web-search-*,
// google-url-context-*, google-safety-sync in test/replay/recordings/google/).

test("a grounding or URL-context tool's prompt (toolUsePromptTokenCount) is input: it joins the prompt", () => {
  const usage = convertGeminiUsage({ promptTokenCount: 12, toolUsePromptTokenCount: 4_431, candidatesTokenCount: 250, thoughtsTokenCount: 100, totalTokenCount: 4_793 });
  expect(usage).toMatchObject({ promptTokens: 4_443, completionTokens: 350, reasoningTokens: 100 });
});

test("an omitted candidatesTokenCount is 0 when totalTokenCount says so (a safety block), unreported when nothing does", () => {
  expect(convertGeminiUsage({ promptTokenCount: 7, totalTokenCount: 7 })).toMatchObject({ promptTokens: 7, completionTokens: 0 });
  expect(convertGeminiUsage({ promptTokenCount: 7, thoughtsTokenCount: 30, totalTokenCount: 37 })).toMatchObject({ completionTokens: 30, reasoningTokens: 30 });
  expect(convertGeminiUsage({ promptTokenCount: 7 }).completionTokens).toBeUndefined();
});
