import type { Fuzzer } from "./fuzz-inputs";

/** Every route of the server, with a valid request to mutate, for the hostile-input fuzz. */

/** The error body a route answers in: each inference protocol's envelope, or the management one. */
export type ErrorShape = "openai" | "anthropic" | "google" | "management";

export interface RouteCase {
  method: string;
  /** With `{nsid}`, `{key}`, `{account}`, `{request}`, `{model}` placeholders. */
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

export function routes(fuzz: Fuzzer): RouteCase[] {
  const model = () => fuzz.pick(MODELS);
  const chat = () => ({
    model: model(),
    messages: [{ role: "system", content: "be brief" }, { role: "user", content: "Hi" }],
    max_tokens: 16,
    temperature: 0.5,
    stream: fuzz.chance(0.3),
    tools: [{ type: "function", function: { name: "weather", description: "w", parameters: schema() } }],
    metadata: { tag: "fuzz" },
    response_format: { type: "text" },
  });
  const responses = () => ({
    model: model(),
    input: [{ role: "user", content: [{ type: "input_text", text: "Hi" }] }],
    instructions: "be brief",
    max_output_tokens: 16,
    stream: fuzz.chance(0.3),
    tools: [{ type: "function", name: "weather", parameters: schema() }],
    reasoning: { effort: "low" },
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
