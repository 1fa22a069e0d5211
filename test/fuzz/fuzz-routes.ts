import { hostileModelId, HOSTILE_KEYS, withHostileKey, type Fuzzer } from "./fuzz-inputs";

/** Every route of the server, with a valid request to mutate, for the hostile-input fuzz. */

/** The error body a route answers in: each inference protocol's envelope, or the management one. */
export type ErrorShape = "openai" | "anthropic" | "google" | "management";

export interface RouteCase {
  method: string;
  /** With `{nsid}`, `{key}`, `{account}`, `{request}`, `{model}`, `{id}`, `{provider}` placeholders. */
  path: string;
  shape: ErrorShape;
  /** Who may call it: an account key, the operator token, or nobody. */
  auth: "account" | "admin" | "none";
  body?: () => unknown;
}

export const CHAT_MODEL = "mock-openai/gpt-4o-mini";
const MODELS = [CHAT_MODEL, "mock-anthropic/claude-haiku-4-5", "mock-google/gemini-2.5-flash", "mock-responses/gpt-5-mini"];

/** A JSON Schema a client could send as tool parameters. */
const schema = () => ({ type: "object", properties: { city: { type: "string" }, days: { type: "integer", minimum: 1 } }, required: ["city"] });

/** A model for an inference body: a served one, or (a quarter of the time) a hostile id (parse-model-ref.ts, resolve-presets.ts). */
export function fuzzModel(fuzz: Fuzzer): string {
  return fuzz.chance(0.25) ? hostileModelId(fuzz) : fuzz.pick(MODELS);
}

export function routes(fuzz: Fuzzer): RouteCase[] {
  const model = () => fuzzModel(fuzz);
  /** Sometimes a models[] fallback list too, with hostile entries among served ones. */
  const models = () => (fuzz.chance(0.15) ? { models: [fuzz.pick(MODELS), model(), model()].slice(0, 1 + fuzz.int(3)) } : {});
  /** A params object for a routing preset: valid keys, and now and then one named by Object.prototype. */
  const presetParams = () => {
    const params: Record<string, unknown> = { temperature: 0.2, max_tokens: 64, stop: ["END"] };
    return fuzz.chance(0.3) ? withHostileKey(fuzz, params) : params;
  };
  const guardrail = () => ({
    model_allow: [fuzz.pick(MODELS), hostileModelId(fuzz)],
    model_deny: [fuzz.pick(HOSTILE_KEYS)],
    max_request_tokens: 1000,
    allow_streaming: true,
    byok: fuzz.pick(["optional", "required", "forbidden"]),
    content_patterns: [{ name: "card", pattern: "\\d{16}", action: "redact" }],
  });
  const rateLimit = () => ({ window_secs: 60, max_requests: 1000, max_tokens: null });
  const budget = () => ({ window: fuzz.pick(["day", "month", "total"]), limit_micro_usd: 5_000_000 });
  const policy = () =>
    fuzz.pick<() => unknown>([
      () => ({ name: "fuzz budget", kind: "budget", spec: budget() }),
      () => ({ name: "fuzz rate", kind: "rate_limit", spec: rateLimit() }),
      () => ({ name: "fuzz guardrail", kind: "guardrail", spec: guardrail() }),
      () => ({ name: "fuzz preset", kind: "preset", spec: { guardrail: guardrail(), budget: budget(), rate_limit: rateLimit() } }),
      () => ({ name: "fuzz kind", kind: fuzz.pick(HOSTILE_KEYS), spec: {} }),
    ])();
  const routingPreset = () => ({
    name: fuzz.chance(0.2) ? fuzz.pick(HOSTILE_KEYS) : `rp-${fuzz.int(1e9)}`,
    model: fuzz.chance(0.7) ? fuzz.pick(MODELS) : hostileModelId(fuzz),
    system_prompt: "be brief",
    params: presetParams(),
    routing: { only: [fuzz.chance(0.7) ? "mock-openai" : fuzz.pick(HOSTILE_KEYS)], ignore: ["mock-anthropic"], sort: fuzz.pick(["cost", "latency", ...HOSTILE_KEYS]) },
  });
  const oauthClient = () => ({
    client_name: "fuzz client",
    client_type: fuzz.pick(["confidential", "public", ...HOSTILE_KEYS]),
    redirect_uris: ["https://app.example.test/cb"],
    allowed_scopes: ["inference:invoke", fuzz.chance(0.8) ? "usage:read" : fuzz.pick(HOSTILE_KEYS)],
    allowed_grant_types: ["authorization_code", fuzz.chance(0.8) ? "refresh_token" : fuzz.pick(HOSTILE_KEYS)],
  });
  const byokKey = () => ({
    provider_name: fuzz.pick(["mock-openai", "openai", ...HOSTILE_KEYS]),
    kek_id: fuzz.pick(["kek_x", ...HOSTILE_KEYS]),
    ciphertext_b64: "AAAA",
    key_prefix: "sk-",
    ...(fuzz.chance(0.3) ? { api_base: "https://api.example.test/v1" } : {}),
  });
  const bind = () => ({ principal_type: fuzz.pick(["namespace", "api_key", "oauth_token", "oauth_client", ...HOSTILE_KEYS]), principal_id: fuzz.pick(["me", "k_x", ...HOSTILE_KEYS]) });
  const chat = () => ({
    model: model(),
    messages: [{ role: "system", content: "be brief" }, { role: "user", content: "Hi" }],
    max_tokens: 16,
    temperature: 0.5,
    stream: fuzz.chance(0.3),
    tools: [{ type: "function", function: { name: "weather", description: "w", parameters: schema() } }],
    metadata: { tag: "fuzz" },
    response_format: { type: "text" },
    ...models(),
  });
  const responses = () => ({
    model: model(),
    input: [{ role: "user", content: [{ type: "input_text", text: "Hi" }] }],
    instructions: "be brief",
    max_output_tokens: 16,
    stream: fuzz.chance(0.3),
    tools: [{ type: "function", name: "weather", parameters: schema() }],
    reasoning: { effort: "low" },
    metadata: { tag: "fuzz" },
    ...models(),
  });
  const messages = () => ({
    model: model(),
    max_tokens: 16,
    system: "be brief",
    stream: fuzz.chance(0.3),
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "sunny" }] },
    ],
    tools: [{ name: "weather", input_schema: schema() }],
    thinking: { type: "disabled" },
    top_k: 5,
    metadata: { user_id: "fuzz" },
    ...models(),
  });
  const generate = () => ({
    contents: [{ role: "user", parts: [{ text: "Hi" }] }],
    systemInstruction: { parts: [{ text: "be brief" }] },
    generationConfig: { maxOutputTokens: 16, topK: 3, responseMimeType: "application/json", responseSchema: schema() },
    tools: [{ functionDeclarations: [{ name: "weather", parameters: schema() }] }],
  });
  return [
    { method: "POST", path: "/v1/chat/completions", shape: "openai", auth: "account", body: chat },
    { method: "POST", path: "/v1/responses", shape: "openai", auth: "account", body: responses },
    { method: "POST", path: "/v1/messages", shape: "anthropic", auth: "account", body: messages },
    { method: "POST", path: "/v1/messages/count_tokens", shape: "anthropic", auth: "account", body: messages },
    { method: "POST", path: "/v1beta/models/{model}:generateContent", shape: "google", auth: "account", body: generate },
    { method: "POST", path: "/v1beta/models/{model}:streamGenerateContent?alt=sse", shape: "google", auth: "account", body: generate },
    { method: "POST", path: "/v1/models/{model}:generateContent", shape: "google", auth: "account", body: generate },
    { method: "POST", path: "/v1beta/{model}:generateContent", shape: "google", auth: "account", body: generate },
    { method: "GET", path: "/v1/namespaces", shape: "management", auth: "account" },
    { method: "POST", path: "/v1/namespaces", shape: "management", auth: "account", body: () => ({ name: `fuzz-${fuzz.int(1e9)}` }) },
    { method: "DELETE", path: "/v1/namespaces/{nsid}", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/namespaces/{nsid}/keys", shape: "management", auth: "account" },
    { method: "POST", path: "/v1/namespaces/{nsid}/keys", shape: "management", auth: "account", body: () => ({ display_name: "fuzz", scopes: ["keys:read"], expires_at: "2999-01-01T00:00:00Z" }) },
    { method: "DELETE", path: "/v1/namespaces/{nsid}/keys/{key}", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/keys", shape: "management", auth: "account" },
    { method: "POST", path: "/v1/keys", shape: "management", auth: "account", body: () => ({ display_name: "fuzz", scopes: ["usage:read"] }) },
    { method: "DELETE", path: "/v1/keys/{key}", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/namespaces/{nsid}/requests?limit=5&offset=0", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/requests?limit=5", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/namespaces/{nsid}/usage?from=2025-01-01T00:00:00Z", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/usage?to=2999-01-01T00:00:00Z", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/requests/{request}/settlement", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/billing/balance", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/billing/transactions?limit=3&offset=1", shape: "management", auth: "account" },
    { method: "POST", path: "/admin/accounts", shape: "management", auth: "admin", body: () => ({ email: `fuzz-${fuzz.int(1e9)}@example.test`, credit_micro_usd: 1000 }) },
    { method: "POST", path: "/admin/accounts/{account}/credits", shape: "management", auth: "admin", body: () => ({ amount_micro_usd: 5 }) },
    { method: "GET", path: "/v1/models?provider=mock-openai&input_modality=text", shape: "management", auth: "none" },
    { method: "GET", path: "/v1/providers", shape: "management", auth: "none" },
    { method: "GET", path: "/v1/stats/usage?days=7&top=5", shape: "management", auth: "none" },
    // The OAuth endpoints take JSON as well as forms; their errors are { error, error_description } too.
    { method: "GET", path: "/.well-known/oauth-authorization-server", shape: "management", auth: "none" },
    { method: "POST", path: "/oauth/device_authorization", shape: "management", auth: "none", body: () => ({ client_id: "switchyard-cli", scope: "inference:invoke usage:read" }) },
    {
      method: "POST",
      path: "/oauth/token",
      shape: "management",
      auth: "none",
      body: () => ({ grant_type: fuzz.pick(["refresh_token", "authorization_code", "urn:ietf:params:oauth:grant-type:device_code"]), client_id: "switchyard-cli", device_code: "dc", refresh_token: "brr_x", code: "c", redirect_uri: "https://app.example.test/cb" }),
    },
    { method: "POST", path: "/oauth/revoke", shape: "management", auth: "none", body: () => ({ token: "bra_x", token_type_hint: "access_token", client_id: "switchyard-cli" }) },
    { method: "POST", path: "/oauth/device/decision", shape: "management", auth: "account", body: () => ({ user_code: "BCDF-GHJK", approve: fuzz.chance(0.5) }) },
    // Management bodies with nested objects keyed by the client: policies, routing presets, OAuth clients, BYOK.
    { method: "POST", path: "/v1/namespaces/{nsid}/routing-presets", shape: "management", auth: "account", body: routingPreset },
    { method: "POST", path: "/v1/routing-presets", shape: "management", auth: "account", body: routingPreset },
    { method: "PUT", path: "/v1/routing-presets/{id}", shape: "management", auth: "account", body: routingPreset },
    { method: "GET", path: "/v1/routing-presets/{id}", shape: "management", auth: "account" },
    { method: "POST", path: "/v1/namespaces/{nsid}/policies", shape: "management", auth: "account", body: policy },
    { method: "PUT", path: "/v1/policies/{id}", shape: "management", auth: "account", body: () => ({ spec: guardrail() }) },
    { method: "GET", path: "/v1/policies?kind={id}", shape: "management", auth: "account" },
    { method: "POST", path: "/v1/policies/{id}/bind", shape: "management", auth: "account", body: bind },
    { method: "GET", path: "/v1/policies/effective?principal_type={id}&principal_id={id}", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/principals/{id}/{id}/policies", shape: "management", auth: "account" },
    { method: "POST", path: "/v1/budgets", shape: "management", auth: "account", body: () => ({ name: "fuzz", ...budget() }) },
    { method: "POST", path: "/v1/presets", shape: "management", auth: "account", body: () => ({ name: "fuzz", guardrail: guardrail(), budget: budget(), rate_limit: rateLimit() }) },
    { method: "POST", path: "/v1/namespaces/{nsid}/oauth/clients", shape: "management", auth: "account", body: oauthClient },
    { method: "PUT", path: "/v1/oauth/clients/{id}", shape: "management", auth: "account", body: oauthClient },
    { method: "POST", path: "/v1/byok/keys", shape: "management", auth: "account", body: byokKey },
    { method: "DELETE", path: "/v1/byok/keys/{provider}", shape: "management", auth: "account" },
    { method: "GET", path: "/v1/models?provider={provider}&id={provider}", shape: "management", auth: "none" },
    { method: "GET", path: "/ping", shape: "management", auth: "none" },
    { method: "GET", path: "/health", shape: "management", auth: "none" },
    { method: "GET", path: "/openapi/json", shape: "management", auth: "none" },
    { method: "GET", path: "/docs/assets/{key}", shape: "management", auth: "none" },
    // Paths no route serves: a 404 in the management shape.
    { method: "POST", path: "/v1beta/models/", shape: "google", auth: "account", body: generate },
    { method: "GET", path: "/", shape: "management", auth: "none" },
    { method: "POST", path: "/v1/", shape: "management", auth: "account", body: chat },
    { method: "GET", path: "/admin/accounts/{account}", shape: "management", auth: "admin" },
    { method: "POST", path: "/v1/messages/count_tokens/{key}", shape: "management", auth: "account", body: messages },
  ];
}
