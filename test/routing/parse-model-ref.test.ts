import { describe, expect, test } from "bun:test";
import { ModelRefError, parseModelRef } from "../../src/routing/parse-model-ref";

function reasonOf(model: string): string {
  const result = parseModelRef(model);
  if (!(result instanceof ModelRefError)) throw new Error(`expected an error for ${JSON.stringify(model)}, got ${JSON.stringify(result)}`);
  return result.reason;
}

describe("parseModelRef", () => {
  test("a plain catalog id has no profile", () => {
    expect(parseModelRef("openai/gpt-4.1")).toEqual({ kind: "model", modelId: "openai/gpt-4.1" });
  });

  test("each of the four profile words is split off as a routing variant", () => {
    expect(parseModelRef("openai/gpt-4.1:cost")).toEqual({ kind: "model", modelId: "openai/gpt-4.1", profile: "cost" });
    expect(parseModelRef("openai/gpt-4.1:latency")).toMatchObject({ profile: "latency" });
    expect(parseModelRef("openai/gpt-4.1:throughput")).toMatchObject({ profile: "throughput" });
    expect(parseModelRef("openai/gpt-4.1:balanced")).toMatchObject({ profile: "balanced" });
  });

  test("any other suffix stays part of the id, to fail later as an unknown model", () => {
    expect(parseModelRef("openai/gpt-4.1:floor")).toEqual({ kind: "model", modelId: "openai/gpt-4.1:floor" });
    expect(parseModelRef("openai/gpt-4.1:Cost")).toEqual({ kind: "model", modelId: "openai/gpt-4.1:Cost" });
    expect(parseModelRef("openai/gpt-4.1:")).toEqual({ kind: "model", modelId: "openai/gpt-4.1:" });
  });

  test("only the last suffix is a profile", () => {
    expect(parseModelRef("openai/gpt-4.1:cost:latency")).toEqual({ kind: "model", modelId: "openai/gpt-4.1:cost", profile: "latency" });
  });

  test("an @ inside the model part is part of the id", () => {
    expect(parseModelRef("mock-openai/gpt-4o-mini@error429")).toEqual({ kind: "model", modelId: "mock-openai/gpt-4o-mini@error429" });
  });

  test("a preset with a base model and a profile", () => {
    expect(parseModelRef("@fast/openai/gpt-4.1:latency")).toEqual({ kind: "preset", preset: "fast", baseModel: "openai/gpt-4.1", profile: "latency" });
  });

  test("a preset alone, and a preset with only a profile", () => {
    expect(parseModelRef("@fast")).toEqual({ kind: "preset", preset: "fast" });
    expect(parseModelRef("@fast:cost")).toEqual({ kind: "preset", preset: "fast", profile: "cost" });
  });

  test("an empty model is an error", () => {
    expect(reasonOf("")).toBe("empty");
  });

  test("a profile with nothing before it is an error", () => {
    expect(reasonOf(":cost")).toBe("invalid_model_id");
  });

  test("garbage is rejected with a typed reason", () => {
    expect(reasonOf("openai/gpt 4.1")).toBe("invalid_characters");
    expect(reasonOf("openai/gpt-4.1\n")).toBe("invalid_characters");
    expect(reasonOf("openai/")).toBe("invalid_model_id");
    expect(reasonOf("/gpt-4.1")).toBe("invalid_model_id");
    expect(reasonOf("x".repeat(257))).toBe("too_long");
  });

  test("a malformed preset is rejected", () => {
    expect(reasonOf("@")).toBe("invalid_preset");
    expect(reasonOf("@:cost")).toBe("invalid_preset");
    expect(reasonOf("@fast/")).toBe("invalid_model_id");
    expect(reasonOf("@fast/@slow")).toBe("invalid_model_id");
  });

  test("the error carries a message that quotes the model", () => {
    const result = parseModelRef("openai/");
    expect(result).toBeInstanceOf(ModelRefError);
    expect(result instanceof ModelRefError ? result.message : "").toContain('"openai/"');
  });
});
