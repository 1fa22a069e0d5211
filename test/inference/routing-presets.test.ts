import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { DEFAULT_TEXT } from "../support/mock-upstreams";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { api, callThroughSdk, CLIENTS, type ClientName } from "../policy-enforcement/enforcement-support";

/**
 * `@name` virtual models through the four official SDKs: what the upstream mock received
 * (model, system prompt, generation parameters, which provider) shows each resolution rule.
 */
let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(() => harness.close());

let presetCounter = 0;
/** Creates a preset in the harness account's namespace; returns its name and id. */
async function preset(spec: Record<string, unknown>): Promise<{ name: string; id: string }> {
  const name = `p${++presetCounter}-${Date.now()}`;
  const created = await api(harness, "POST", "/v1/routing-presets", { name, ...spec });
  return { name, id: created.id };
}

interface Extras {
  system?: string;
  temperature?: number;
  maxTokens?: number;
}

/** One sync call through `client`'s SDK with an optional system prompt and parameters; returns the answer text. */
async function ask(client: ClientName, model: string, extras: Extras = {}): Promise<string> {
  const apiKey = harness.account.apiKey;
  const prompt = "What is the weather in Paris?";
  switch (client) {
    case "openai-chat": {
      const openai = new OpenAI({ apiKey, baseURL: `${harness.server.url}/v1`, maxRetries: 0 });
      const completion = await openai.chat.completions.create({
        model,
        messages: [...(extras.system ? [{ role: "system" as const, content: extras.system }] : []), { role: "user" as const, content: prompt }],
        ...(extras.temperature !== undefined ? { temperature: extras.temperature } : {}),
        ...(extras.maxTokens !== undefined ? { max_tokens: extras.maxTokens } : {}),
      });
      return completion.choices[0]!.message.content ?? "";
    }
    case "openai-responses": {
      const openai = new OpenAI({ apiKey, baseURL: `${harness.server.url}/v1`, maxRetries: 0 });
      const response = await openai.responses.create({
        model,
        input: prompt,
        ...(extras.system ? { instructions: extras.system } : {}),
        ...(extras.temperature !== undefined ? { temperature: extras.temperature } : {}),
        ...(extras.maxTokens !== undefined ? { max_output_tokens: extras.maxTokens } : {}),
      });
      return response.output_text;
    }
    case "anthropic-messages": {
      const anthropic = new Anthropic({ apiKey, baseURL: harness.server.url, maxRetries: 0 });
      const message = await anthropic.messages.create({
        model,
        // Anthropic's wire requires max_tokens: a preset's max_tokens never applies here.
        max_tokens: extras.maxTokens ?? 256,
        messages: [{ role: "user", content: prompt }],
        ...(extras.system ? { system: extras.system } : {}),
        ...(extras.temperature !== undefined ? { temperature: extras.temperature } : {}),
      });
      return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    }
    case "google-generate-content": {
      const google = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: harness.server.url } });
      const config = {
        ...(extras.system ? { systemInstruction: extras.system } : {}),
        ...(extras.temperature !== undefined ? { temperature: extras.temperature } : {}),
        ...(extras.maxTokens !== undefined ? { maxOutputTokens: extras.maxTokens } : {}),
      };
      const response = await google.models.generateContent({ model, contents: prompt, ...(Object.keys(config).length > 0 ? { config } : {}) });
      return response.text ?? "";
    }
  }
}

type Json = Record<string, any>;
/** The last body the OpenAI-chat mock received. */
const lastOpenAiBody = (): Json => harness.mocks.openai.requests.at(-1)!.body as Json;
const systemOf = (body: Json) => body.messages.filter((m: Json) => m.role === "system").map((m: Json) => m.content);

describe("@name resolves to the preset's model, through every protocol", () => {
  for (const client of CLIENTS) {
    test(`${client}: "@name" is served by the preset's model and the answer echoes "@name"`, async () => {
      const { name } = await preset({ model: "mock-openai/gpt-4.1" });
      const before = harness.mocks.openai.requests.length;
      expect(await ask(client, `@${name}`)).toBe(DEFAULT_TEXT);
      expect(harness.mocks.openai.requests.length).toBe(before + 1);
      expect(lastOpenAiBody().model).toBe("gpt-4.1");
      // Streamed the same way.
      expect(await callThroughSdk(harness, client, harness.account.apiKey, `@${name}`, { stream: true })).toEqual({ ok: true, text: DEFAULT_TEXT });
      expect(harness.mocks.openai.requests.length).toBe(before + 2);
      expect(lastOpenAiBody()).toMatchObject({ model: "gpt-4.1", stream: true });
    });

    test(`${client}: "@name/<provider>/<model>" serves that model with the preset's settings`, async () => {
      const { name } = await preset({ model: "mock-openai/gpt-4.1", system_prompt: "You are the support bot.", params: { temperature: 0.25 } });
      const before = harness.mocks.anthropic.requests.length;
      expect(await ask(client, `@${name}/mock-anthropic/claude-haiku-4-5`)).toBe(DEFAULT_TEXT);
      expect(harness.mocks.anthropic.requests.length).toBe(before + 1);
      const body = harness.mocks.anthropic.requests.at(-1)!.body as Json;
      expect(body.model).toBe("claude-haiku-4-5");
      expect(JSON.stringify(body.system)).toContain("You are the support bot.");
      expect(body.temperature).toBe(0.25);
    });
  }

  test('the Google SDK reaches "@name" variants through the model in its path', async () => {
    const { name } = await preset({ model: "mock-google/gemini-2.5-pro" });
    for (const model of [`@${name}`, `@${name}:cost`, `@${name}/mock-google/gemini-2.5-flash`]) {
      const before = harness.mocks.google.requests.length;
      expect(await ask("google-generate-content", model)).toBe(DEFAULT_TEXT);
      expect(harness.mocks.google.requests.length).toBe(before + 1);
      const served = harness.mocks.google.requests.at(-1)!.path;
      expect({ model, served }).toEqual({ model, served: expect.stringContaining(model.includes("/mock-google/") ? "gemini-2.5-flash:" : "gemini-2.5-pro:") });
    }
  });
});

describe("system_prompt applies only when the request has none", () => {
  for (const client of CLIENTS) {
    test(`${client}`, async () => {
      const { name } = await preset({ model: "mock-openai/gpt-4.1", system_prompt: "Preset system." });
      await ask(client, `@${name}`);
      expect(systemOf(lastOpenAiBody())).toEqual(["Preset system."]);
      await ask(client, `@${name}`, { system: "Client system." });
      expect(systemOf(lastOpenAiBody())).toEqual(["Client system."]);
    });
  }
});

describe("params fill only the keys the request omitted", () => {
  for (const client of CLIENTS) {
    test(`${client}`, async () => {
      const { name } = await preset({ model: "mock-openai/gpt-4.1", params: { temperature: 0.1, top_p: 0.5, max_tokens: 77 } });
      await ask(client, `@${name}`, { temperature: 0.9 });
      const body = lastOpenAiBody();
      expect(body.temperature).toBe(0.9);
      expect(body.top_p).toBe(0.5);
      // Anthropic's wire always carries max_tokens, so the request's own (256) wins there.
      expect(body.max_tokens ?? body.max_completion_tokens).toBe(client === "anthropic-messages" ? 256 : 77);
      await ask(client, `@${name}`);
      expect(lastOpenAiBody().temperature).toBe(0.1);
    });
  }
});

describe("routing profile and provider lists", () => {
  test('":<profile>" overrides routing.sort, which overrides balanced; the record keeps the preset name and the profile', async () => {
    const sorted = await preset({ model: "multi/chat-model", routing: { sort: "cost" } });
    const plain = await preset({ model: "multi/chat-model" });
    const runs: Array<[string, string]> = [
      [`@${sorted.name}`, "cost"],
      [`@${sorted.name}:latency`, "latency"],
      [`@${plain.name}`, "balanced"],
      // Without a preset: no routing_preset in the record.
      ["multi/chat-model:throughput", "throughput"],
    ];
    for (const [model, profile] of runs) {
      const requestId = `preset-profile-${++presetCounter}-${Date.now()}`;
      const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${harness.account.apiKey}`, "x-request-id": requestId },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as Json).model).toBe(model);
      let record: Json | undefined;
      for (let i = 0; i < 500 && record === undefined; i++) {
        record = (await api(harness, "GET", "/v1/requests?limit=100")).data.find((row: Json) => row.request_id === requestId);
        if (record === undefined) await Bun.sleep(20);
      }
      const presetName = model.startsWith("@") ? { routing_preset: model.slice(1).split(":")[0] } : {};
      expect({ model, record: record && { routing_profile: record.routing_profile, model_id: record.model_id, ...("routing_preset" in record ? { routing_preset: record.routing_preset } : {}) } }).toEqual({
        model,
        record: { routing_profile: profile, model_id: "multi/chat-model", ...presetName },
      });
    }
  });

  test("only and ignore narrow the providers; a list that leaves none is a 400", async () => {
    const onlyAnthropic = await preset({ model: "multi/chat-model", routing: { only: ["mock-anthropic"], sort: "cost" } });
    const ignoreOpenAi = await preset({ model: "multi/chat-model", routing: { ignore: ["mock-openai"], sort: "cost" } });
    const cheapest = await preset({ model: "multi/chat-model", routing: { sort: "cost" } });
    for (const [name, mock] of [
      [onlyAnthropic.name, "anthropic"],
      [ignoreOpenAi.name, "anthropic"],
      [cheapest.name, "openai"],
    ] as const) {
      const before = { openai: harness.mocks.openai.requests.length, anthropic: harness.mocks.anthropic.requests.length };
      expect(await ask("openai-chat", `@${name}`)).toBe(DEFAULT_TEXT);
      expect({ name, openai: harness.mocks.openai.requests.length - before.openai, anthropic: harness.mocks.anthropic.requests.length - before.anthropic }).toEqual({
        name,
        openai: mock === "openai" ? 1 : 0,
        anthropic: mock === "anthropic" ? 1 : 0,
      });
    }
    // Never widens: an allow-list naming a provider that does not serve the model leaves none.
    const elsewhere = await preset({ model: "mock-openai/gpt-4.1", routing: { only: ["mock-anthropic"] } });
    const ignored = await preset({ model: "mock-openai/gpt-4.1", routing: { ignore: ["mock-openai"] } });
    for (const { name } of [elsewhere, ignored]) {
      for (const client of CLIENTS) {
        const seen = await callThroughSdk(harness, client, harness.account.apiKey, `@${name}`, { stream: false });
        expect({ client, status: seen.ok ? 200 : seen.status }).toEqual({ client, status: 400 });
        expect(seen.ok ? "" : seen.message).toContain("leaves no provider");
      }
    }
  });
});

describe("models[] fallbacks", () => {
  test("a @preset entry in models is resolved like model, and serves when the first entry fails", async () => {
    const { name } = await preset({ model: "mock-openai/gpt-4.1", system_prompt: "Fallback system." });
    const before = harness.mocks.openai.requests.length;
    const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${harness.account.apiKey}` },
      body: JSON.stringify({ model: "ignored", models: ["mock-anthropic/claude-sonnet-4-5@error500", `@${name}`], messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(200);
    expect(harness.mocks.openai.requests.length).toBe(before + 1);
    expect(lastOpenAiBody().model).toBe("gpt-4.1");
  });

  test("an unknown @preset anywhere in models is a 400 before any attempt", async () => {
    const before = harness.mocks.openai.requests.length;
    const response = await fetch(`${harness.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${harness.account.apiKey}` },
      body: JSON.stringify({ model: "x", models: ["mock-openai/gpt-4.1", "@no-such-preset"], messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).error.message).toContain("@no-such-preset");
    expect(harness.mocks.openai.requests.length).toBe(before);
  });
});

describe("unknown, disabled and model-less presets are a 400 in each protocol", () => {
  for (const client of CLIENTS) {
    test(`${client}`, async () => {
      const disabled = await preset({ model: "mock-openai/gpt-4.1" });
      // Used once (and cached), then disabled: the change applies at once on this instance.
      expect(await ask(client, `@${disabled.name}`)).toBe(DEFAULT_TEXT);
      await api(harness, "POST", `/v1/routing-presets/${disabled.id}/disable`);
      const modelless = await preset({});
      const before = harness.mocks.openai.requests.length;
      for (const model of ["@never-created", `@${disabled.name}`, `@${modelless.name}`]) {
        const seen = await callThroughSdk(harness, client, harness.account.apiKey, model, { stream: false });
        expect({ model, status: seen.ok ? 200 : seen.status }).toEqual({ model, status: 400 });
        expect(seen.ok ? "" : seen.message).toContain("@");
      }
      expect(harness.mocks.openai.requests.length).toBe(before);
      // Enabled again, it serves again.
      await api(harness, "POST", `/v1/routing-presets/${disabled.id}/enable`);
      expect(await ask(client, `@${disabled.name}`)).toBe(DEFAULT_TEXT);
    });
  }

  /** The raw request of `client`'s protocol for `model` (for Google the model is in the path, encoded). */
  function rawRequest(client: ClientName, model: string): { path: string; body: Json } {
    const messages = [{ role: "user", content: "hi" }];
    switch (client) {
      case "openai-chat":
        return { path: "/v1/chat/completions", body: { model, messages } };
      case "openai-responses":
        return { path: "/v1/responses", body: { model, input: "hi" } };
      case "anthropic-messages":
        return { path: "/v1/messages", body: { model, max_tokens: 16, messages } };
      case "google-generate-content":
        return { path: `/v1beta/models/${encodeURIComponent(model)}:generateContent`, body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] } };
    }
  }

  /** The error message of a body in `client`'s protocol shape, or a description of what is wrong with it. */
  function protocolErrorMessage(client: ClientName, status: number, body: Json | undefined): string {
    if (client === "anthropic-messages") return body?.type === "error" && typeof body.error?.type === "string" ? body.error.message : `not an Anthropic error: ${JSON.stringify(body)}`;
    if (client === "google-generate-content") return body?.error?.code === status && typeof body.error.status === "string" ? body.error.message : `not a Google error: ${JSON.stringify(body)}`;
    return typeof body?.error?.type === "string" ? body.error.message : `not an OpenAI error: ${JSON.stringify(body)}`;
  }

  for (const client of CLIENTS) {
    test(`${client}: a model starting with "@" that names no preset ("@", "@/", "@x/", "@:", "@__proto__", …) is a 400 in the protocol's shape`, async () => {
      const before = harness.mocks.openai.requests.length;
      const models = ["@", "@/", "@x/", "@:", "@::", "@:cost", "@/mock-openai/gpt-4.1", "@x//y", "@x/@y", "@__proto__", "@constructor/x", "@.", "@x/:cost", `@${"a".repeat(300)}`, "@\u00e9", "@x\u0000"];
      for (const model of models) {
        const { path, body } = rawRequest(client, model);
        const response = await harness.server.api("POST", path, { token: harness.account.apiKey, body });
        expect({ model, status: response.status }).toEqual({ model, status: 400 });
        expect({ model, message: protocolErrorMessage(client, 400, response.body) }).toEqual({ model, message: expect.stringMatching(/model|preset/) });
      }
      // The same in a models[] fallback list.
      if (client === "openai-chat") {
        const response = await harness.server.api("POST", "/v1/chat/completions", { token: harness.account.apiKey, body: { model: "x", models: ["mock-openai/gpt-4.1", "@"], messages: [{ role: "user", content: "hi" }] } });
        expect(response.status).toBe(400);
      }
      expect(harness.mocks.openai.requests.length).toBe(before);
    });
  }

  test('a preset named like an Object.prototype member ("constructor", "toString") resolves like any other', async () => {
    for (const name of ["constructor", "toString", "hasOwnProperty"]) {
      const created = await harness.server.api("POST", "/v1/routing-presets", { token: harness.account.apiKey, body: { name, model: "mock-openai/gpt-4.1", params: { temperature: 0.3 } } });
      expect({ name, status: created.status }).toEqual({ name, status: 200 });
      for (const client of CLIENTS) {
        const before = harness.mocks.openai.requests.length;
        expect({ name, client, text: await ask(client, `@${name}`) }).toEqual({ name, client, text: DEFAULT_TEXT });
        expect(harness.mocks.openai.requests.length).toBe(before + 1);
        expect(lastOpenAiBody()).toMatchObject({ model: "gpt-4.1", temperature: 0.3 });
      }
    }
  });

  test("another account's preset name is unknown here", async () => {
    const other = await harness.server.createAccount(undefined, 10_000_000);
    const name = `foreign-${Date.now()}`;
    expect((await harness.server.api("POST", "/v1/routing-presets", { token: other.apiKey, body: { name, model: "mock-openai/gpt-4.1" } })).status).toBe(200);
    const seen = await callThroughSdk(harness, "openai-chat", harness.account.apiKey, `@${name}`, { stream: false });
    expect(seen.ok ? 200 : seen.status).toBe(400);
    expect((await callThroughSdk(harness, "openai-chat", other.apiKey, `@${name}`, { stream: false })).ok).toBe(true);
  });
});

describe("policies judge the resolved model", () => {
  for (const client of CLIENTS) {
    test(`${client}: a guardrail denying the preset's model refuses "@name" with 403`, async () => {
      const { name } = await preset({ model: "mock-openai/gpt-4o-mini" });
      const ns = `/v1/namespaces/${harness.account.namespaceId}`;
      const key = await api(harness, "POST", `${ns}/keys`, { display_name: "guarded", scopes: ["inference:invoke"] });
      const policy = await api(harness, "POST", `${ns}/policies`, { name: `deny ${name}`, kind: "guardrail", spec: { model_deny: ["mock-openai/gpt-4o-mini"] } });
      await api(harness, "POST", `${ns}/policies/${policy.id}/bind`, { principal_type: "api_key", principal_id: key.id });
      const before = harness.mocks.openai.requests.length;
      const seen = await callThroughSdk(harness, client, key.token, `@${name}`, { stream: false });
      expect({ status: seen.ok ? 200 : seen.status, code: seen.ok ? undefined : seen.code }).toEqual({ status: 403, code: "permission_denied" });
      expect(harness.mocks.openai.requests.length).toBe(before);
      // The same key may use another model through the same kind of preset.
      const allowed = await preset({ model: "mock-openai/gpt-4.1" });
      expect((await callThroughSdk(harness, client, key.token, `@${allowed.name}`, { stream: false })).ok).toBe(true);
    });
  }
});
