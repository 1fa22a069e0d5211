import { describe, expect, test } from "bun:test";
import { pricingForPromptTokens, type CatalogPricing } from "../../src/providers/pricing";

const geminiPro: CatalogPricing = {
  input: 1.25,
  output: 10,
  cacheRead: 0.31,
  contextTiers: [{ aboveInputTokens: 200_000, input: 2.5, output: 15, cacheRead: 0.625 }],
};

const stepped: CatalogPricing = {
  input: 1,
  output: 2,
  cacheRead: 0.1,
  cacheWrite: 1.25,
  contextTiers: [
    { aboveInputTokens: 1_000, input: 3 },
    { aboveInputTokens: 10_000, input: 5, output: 7 },
  ],
};

describe("pricingForPromptTokens", () => {
  test("uses the base rates at and below the tier bound, because the bound is exclusive", () => {
    expect(pricingForPromptTokens(geminiPro, 0)).toEqual({ input: 1.25, output: 10, cacheRead: 0.31 });
    expect(pricingForPromptTokens(geminiPro, 200_000)).toEqual({ input: 1.25, output: 10, cacheRead: 0.31 });
  });

  test("switches the whole request to the tier one token above the bound", () => {
    expect(pricingForPromptTokens(geminiPro, 200_001)).toEqual({ input: 2.5, output: 15, cacheRead: 0.625 });
  });

  test("picks the tier with the largest bound below the prompt, not the first that matches", () => {
    expect(pricingForPromptTokens(stepped, 1_001).input).toBe(3);
    expect(pricingForPromptTokens(stepped, 10_000).input).toBe(3);
    expect(pricingForPromptTokens(stepped, 10_001)).toEqual({ input: 5, output: 7, cacheRead: 0.1, cacheWrite: 1.25 });
  });

  test("lets rates a tier leaves out inherit the base rates", () => {
    expect(pricingForPromptTokens(stepped, 5_000)).toEqual({ input: 3, output: 2, cacheRead: 0.1, cacheWrite: 1.25 });
  });

  test("keeps an absent cache rate absent rather than inventing zero", () => {
    const rates = pricingForPromptTokens({ input: 1, output: 1, contextTiers: [] }, 10);
    expect("cacheRead" in rates).toBe(false);
    expect("cacheWrite" in rates).toBe(false);
  });
});
