import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import type { InferenceHarness } from "../support/inference-harness";

/** The four client protocols the policy tests drive, each through its official SDK. */
export const CLIENTS = ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"] as const;
export type ClientName = (typeof CLIENTS)[number];

export interface CallOptions {
  stream: boolean;
  prompt?: string;
  maxTokens?: number;
}

/** What a client saw: its answer's text, or the error its SDK threw, read the way an application reads it. */
export type Seen = { ok: true; text: string } | { ok: false; status: number | undefined; code: string | undefined; message: string; retryAfter: string | null | undefined };

/** Where an SDK is pointed: a harness, or any server with a URL (a spawned instance). */
export type SdkTarget = { server: { url: string } };

/** One SDK call with `token` against the harness; an SDK error becomes `Seen` with status and code where the protocol has room. */
export async function callThroughSdk(harness: SdkTarget, client: ClientName, token: string, model: string, options: CallOptions): Promise<Seen> {
  const prompt = options.prompt ?? "Say hello.";
  try {
    switch (client) {
      case "openai-chat": {
        const openai = new OpenAI({ apiKey: token, baseURL: `${harness.server.url}/v1`, maxRetries: 0 });
        const request = { model, messages: [{ role: "user" as const, content: prompt }], ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}) };
        if (!options.stream) return { ok: true, text: (await openai.chat.completions.create(request)).choices[0]!.message.content ?? "" };
        let text = "";
        for await (const chunk of await openai.chat.completions.create({ ...request, stream: true })) text += chunk.choices[0]?.delta?.content ?? "";
        return { ok: true, text };
      }
      case "openai-responses": {
        const openai = new OpenAI({ apiKey: token, baseURL: `${harness.server.url}/v1`, maxRetries: 0 });
        const request = { model, input: prompt, ...(options.maxTokens ? { max_output_tokens: options.maxTokens } : {}) };
        if (!options.stream) return { ok: true, text: (await openai.responses.create(request)).output_text };
        let text = "";
        for await (const event of await openai.responses.create({ ...request, stream: true })) {
          if (event.type === "response.output_text.delta") text += event.delta;
          // The Responses wire ends a failed stream with an error event: the SDK hands it over as an event.
          if (event.type === "error") return { ok: false, status: undefined, code: event.code ?? undefined, message: event.message, retryAfter: undefined };
        }
        return { ok: true, text };
      }
      case "anthropic-messages": {
        const anthropic = new Anthropic({ apiKey: token, baseURL: harness.server.url, maxRetries: 0 });
        const request = { model, max_tokens: options.maxTokens ?? 256, messages: [{ role: "user" as const, content: prompt }] };
        if (!options.stream) {
          const message = await anthropic.messages.create(request);
          return { ok: true, text: message.content.map((block) => (block.type === "text" ? block.text : "")).join("") };
        }
        let text = "";
        for await (const event of await anthropic.messages.create({ ...request, stream: true })) {
          if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
        }
        return { ok: true, text };
      }
      case "google-generate-content": {
        const google = new GoogleGenAI({ apiKey: token, httpOptions: { baseUrl: harness.server.url } });
        const request = { model, contents: prompt, ...(options.maxTokens ? { config: { maxOutputTokens: options.maxTokens } } : {}) };
        if (!options.stream) return { ok: true, text: (await google.models.generateContent(request)).text ?? "" };
        let text = "";
        for await (const chunk of await google.models.generateContentStream(request)) text += chunk.text ?? "";
        return { ok: true, text };
      }
    }
  } catch (error) {
    return seenError(error);
  }
}

function seenError(error: unknown): Seen {
  if (error instanceof OpenAI.APIError) {
    return { ok: false, status: error.status, code: error.code ?? undefined, message: error.message, retryAfter: error.headers?.get("retry-after") };
  }
  if (error instanceof Anthropic.APIError) {
    const body = error.error as { error?: { type?: string; message?: string } } | undefined;
    const message = body?.error?.message ?? error.message;
    // Anthropic has no code field: the message starts with the code.
    return { ok: false, status: error.status, code: /^([a-z_]+):/.exec(message)?.[1], message, retryAfter: error.headers?.get("retry-after") };
  }
  if (error instanceof ApiError) {
    // The SDK's message is the error body (after "got status: …. " for a stream's error frame).
    const json = error.message.slice(error.message.indexOf("{"));
    const body = JSON.parse(json) as { error: { message: string; details?: { reason?: string }[] } };
    return { ok: false, status: error.status, code: body.error.details?.[0]?.reason, message: body.error.message, retryAfter: undefined };
  }
  throw error;
}

/** The management API with the harness account's key. */
export async function api(harness: InferenceHarness, method: string, path: string, body?: unknown) {
  const response = await harness.server.api(method, path, { token: harness.account.apiKey, body });
  if (response.status !== 200) throw new Error(`${method} ${path} failed: ${response.status} ${response.text}`);
  return response.body;
}

/** A new inference key in the account's namespace with a new policy of `kind` bound to it. */
export async function keyWithPolicy(harness: InferenceHarness, kind: string, spec: unknown): Promise<{ keyId: string; token: string; policyId: string }> {
  const ns = `/v1/namespaces/${harness.account.namespaceId}`;
  const key = await api(harness, "POST", `${ns}/keys`, { display_name: `${kind} key`, scopes: ["inference:invoke"] });
  const policy = await api(harness, "POST", `${ns}/policies`, { name: `${kind} for ${key.id}`, kind, spec });
  await api(harness, "POST", `${ns}/policies/${policy.id}/bind`, { principal_type: "api_key", principal_id: key.id });
  return { keyId: key.id, token: key.token, policyId: policy.id };
}
