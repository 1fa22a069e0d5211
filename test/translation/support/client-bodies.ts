/**
 * A protocol-neutral description of a client request, and one hand-written builder
 * per protocol that renders it as that protocol's client wire body. The builders are
 * deliberately independent of the codecs under test: they follow the public API
 * shapes, so a codec bug cannot hide behind a matching bug
 * in the fixture generator.
 */
import type { ProtocolId } from "../../../src/ir";
import { decodeClientRequest } from "../../../src/translation/translate-request";
import type { DecodedRequest } from "../../../src/translation/translation-types";

export type Json = Record<string, unknown>;

export interface ToolCallSpec {
  id: string;
  name: string;
  args: Json;
}

export interface ToolResultSpec {
  /** The id of the call answered (Gemini clients answer by name only). */
  id: string;
  name: string;
  output: string;
}

export type UserPartSpec =
  | { text: string }
  | { image: { mediaType: string; data: string } }
  | { imageUrl: string; mediaType: string };

export type TurnSpec =
  | { role: "user"; parts: UserPartSpec[] }
  | { role: "assistant"; text?: string; calls?: ToolCallSpec[] }
  | { role: "tool"; results: ToolResultSpec[] };

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Json;
}

export type ToolChoiceSpec = "auto" | "required" | "none" | { name: string };

export interface ParamsSpec {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  effort?: "low" | "medium" | "high";
}

export interface ConversationSpec {
  /** Several system parts: each protocol has its own way of sending more than one. */
  system?: string[];
  turns: TurnSpec[];
  tools?: ToolSpec[];
  toolChoice?: ToolChoiceSpec;
  parallelToolCalls?: boolean;
  jsonSchema?: { name: string; schema: Json; strict?: boolean };
  params?: ParamsSpec;
}

export const CLIENT_MODEL = "switchyard/pair-matrix-model";

/** Which generation params each protocol can express as a client. */
export const CLIENT_PARAMS: Record<ProtocolId, ReadonlyArray<keyof ParamsSpec>> = {
  "openai-chat": ["maxTokens", "temperature", "topP", "stop", "seed", "presencePenalty", "frequencyPenalty", "effort"],
  "openai-responses": ["maxTokens", "temperature", "topP", "effort"],
  "anthropic-messages": ["maxTokens", "temperature", "topP", "topK", "stop", "effort"],
  "google-generate-content": ["maxTokens", "temperature", "topP", "topK", "stop", "seed", "presencePenalty", "frequencyPenalty", "effort"],
};

/** A 1×1 PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

// ---------------------------------------------------------------- OpenAI chat

function chatBody(spec: ConversationSpec): Json {
  const messages: Json[] = [];
  (spec.system ?? []).forEach((text, index) => messages.push({ role: index === 0 ? "system" : "developer", content: text }));
  for (const turn of spec.turns) {
    if (turn.role === "user") {
      const only = turn.parts[0];
      if (turn.parts.length === 1 && only !== undefined && "text" in only) {
        messages.push({ role: "user", content: only.text });
        continue;
      }
      messages.push({
        role: "user",
        content: turn.parts.map((part) => {
          if ("text" in part) return { type: "text", text: part.text };
          if ("image" in part) return { type: "image_url", image_url: { url: dataUrl(part.image.mediaType, part.image.data) } };
          return { type: "image_url", image_url: { url: part.imageUrl } };
        }),
      });
    } else if (turn.role === "assistant") {
      const message: Json = { role: "assistant", content: turn.text ?? null };
      if (turn.calls !== undefined && turn.calls.length > 0) {
        message.tool_calls = turn.calls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.args) },
        }));
      }
      messages.push(message);
    } else {
      for (const result of turn.results) messages.push({ role: "tool", tool_call_id: result.id, content: result.output });
    }
  }
  const body: Json = { model: CLIENT_MODEL, messages };
  if (spec.tools !== undefined) {
    body.tools = spec.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  if (spec.toolChoice !== undefined) {
    body.tool_choice = typeof spec.toolChoice === "string" ? spec.toolChoice : { type: "function", function: { name: spec.toolChoice.name } };
  }
  if (spec.parallelToolCalls !== undefined) body.parallel_tool_calls = spec.parallelToolCalls;
  if (spec.jsonSchema !== undefined) {
    const schema: Json = { name: spec.jsonSchema.name, schema: spec.jsonSchema.schema };
    if (spec.jsonSchema.strict !== undefined) schema.strict = spec.jsonSchema.strict;
    body.response_format = { type: "json_schema", json_schema: schema };
  }
  const params = spec.params ?? {};
  if (params.maxTokens !== undefined) body.max_completion_tokens = params.maxTokens;
  if (params.temperature !== undefined) body.temperature = params.temperature;
  if (params.topP !== undefined) body.top_p = params.topP;
  if (params.stop !== undefined) body.stop = params.stop;
  if (params.seed !== undefined) body.seed = params.seed;
  if (params.presencePenalty !== undefined) body.presence_penalty = params.presencePenalty;
  if (params.frequencyPenalty !== undefined) body.frequency_penalty = params.frequencyPenalty;
  if (params.effort !== undefined) body.reasoning_effort = params.effort;
  return body;
}

// ----------------------------------------------------------- OpenAI Responses

function responsesBody(spec: ConversationSpec): Json {
  const input: Json[] = [];
  const [instructions, ...moreSystem] = spec.system ?? [];
  for (const text of moreSystem) input.push({ type: "message", role: "developer", content: text });
  for (const turn of spec.turns) {
    if (turn.role === "user") {
      input.push({
        type: "message",
        role: "user",
        content: turn.parts.map((part) => {
          if ("text" in part) return { type: "input_text", text: part.text };
          if ("image" in part) return { type: "input_image", image_url: dataUrl(part.image.mediaType, part.image.data), detail: "auto" };
          return { type: "input_image", image_url: part.imageUrl, detail: "auto" };
        }),
      });
    } else if (turn.role === "assistant") {
      if (turn.text !== undefined) {
        input.push({ type: "message", role: "assistant", content: [{ type: "output_text", text: turn.text, annotations: [] }] });
      }
      for (const call of turn.calls ?? []) {
        input.push({ type: "function_call", call_id: call.id, name: call.name, arguments: JSON.stringify(call.args) });
      }
    } else {
      for (const result of turn.results) input.push({ type: "function_call_output", call_id: result.id, output: result.output });
    }
  }
  const body: Json = { model: CLIENT_MODEL, input };
  if (instructions !== undefined) body.instructions = instructions;
  if (spec.tools !== undefined) {
    body.tools = spec.tools.map((tool) => ({ type: "function", name: tool.name, description: tool.description, parameters: tool.parameters }));
  }
  if (spec.toolChoice !== undefined) {
    body.tool_choice = typeof spec.toolChoice === "string" ? spec.toolChoice : { type: "function", name: spec.toolChoice.name };
  }
  if (spec.parallelToolCalls !== undefined) body.parallel_tool_calls = spec.parallelToolCalls;
  if (spec.jsonSchema !== undefined) {
    const format: Json = { type: "json_schema", name: spec.jsonSchema.name, schema: spec.jsonSchema.schema };
    if (spec.jsonSchema.strict !== undefined) format.strict = spec.jsonSchema.strict;
    body.text = { format };
  }
  const params = spec.params ?? {};
  if (params.maxTokens !== undefined) body.max_output_tokens = params.maxTokens;
  if (params.temperature !== undefined) body.temperature = params.temperature;
  if (params.topP !== undefined) body.top_p = params.topP;
  if (params.effort !== undefined) body.reasoning = { effort: params.effort };
  return body;
}

// ---------------------------------------------------------- Anthropic Messages

function anthropicBody(spec: ConversationSpec): Json {
  const messages: Array<{ role: string; content: Json[] }> = [];
  const append = (role: "user" | "assistant", blocks: Json[]): void => {
    const last = messages[messages.length - 1];
    // Anthropic clients send tool results and the next user text in one user message.
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const turn of spec.turns) {
    if (turn.role === "user") {
      append(
        "user",
        turn.parts.map((part) => {
          if ("text" in part) return { type: "text", text: part.text };
          if ("image" in part) return { type: "image", source: { type: "base64", media_type: part.image.mediaType, data: part.image.data } };
          return { type: "image", source: { type: "url", url: part.imageUrl } };
        }),
      );
    } else if (turn.role === "assistant") {
      const blocks: Json[] = [];
      if (turn.text !== undefined) blocks.push({ type: "text", text: turn.text });
      for (const call of turn.calls ?? []) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: call.args });
      append("assistant", blocks);
    } else {
      append(
        "user",
        turn.results.map((result) => ({ type: "tool_result", tool_use_id: result.id, content: result.output })),
      );
    }
  }
  const body: Json = { model: CLIENT_MODEL, messages };
  const system = spec.system ?? [];
  if (system.length === 1) body.system = system[0];
  else if (system.length > 1) body.system = system.map((text) => ({ type: "text", text }));
  if (spec.tools !== undefined) {
    body.tools = spec.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }));
  }
  let toolChoice: Json | undefined;
  if (spec.toolChoice === "auto") toolChoice = { type: "auto" };
  else if (spec.toolChoice === "required") toolChoice = { type: "any" };
  else if (spec.toolChoice === "none") toolChoice = { type: "none" };
  else if (spec.toolChoice !== undefined) toolChoice = { type: "tool", name: spec.toolChoice.name };
  if (spec.parallelToolCalls !== undefined) {
    toolChoice = { ...(toolChoice ?? { type: "auto" }), disable_parallel_tool_use: !spec.parallelToolCalls };
  }
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  const params = spec.params ?? {};
  const outputConfig: Json = {};
  if (spec.jsonSchema !== undefined) outputConfig.format = { type: "json_schema", schema: spec.jsonSchema.schema };
  if (params.effort !== undefined) outputConfig.effort = params.effort;
  if (Object.keys(outputConfig).length > 0) body.output_config = outputConfig;
  if (params.maxTokens !== undefined) body.max_tokens = params.maxTokens;
  if (params.temperature !== undefined) body.temperature = params.temperature;
  if (params.topP !== undefined) body.top_p = params.topP;
  if (params.topK !== undefined) body.top_k = params.topK;
  if (params.stop !== undefined) body.stop_sequences = params.stop;
  return body;
}

// ------------------------------------------------------------------- Gemini

function geminiBody(spec: ConversationSpec): Json {
  const contents: Json[] = [];
  for (const turn of spec.turns) {
    if (turn.role === "user") {
      contents.push({
        role: "user",
        parts: turn.parts.map((part) => {
          if ("text" in part) return { text: part.text };
          if ("image" in part) return { inlineData: { mimeType: part.image.mediaType, data: part.image.data } };
          return { fileData: { mimeType: part.mediaType, fileUri: part.imageUrl } };
        }),
      });
    } else if (turn.role === "assistant") {
      const parts: Json[] = [];
      if (turn.text !== undefined) parts.push({ text: turn.text });
      for (const call of turn.calls ?? []) parts.push({ functionCall: { name: call.name, args: call.args } });
      contents.push({ role: "model", parts });
    } else {
      // Gemini answers by function name; there are no call ids on this wire.
      contents.push({
        role: "user",
        parts: turn.results.map((result) => ({ functionResponse: { name: result.name, response: { result: result.output } } })),
      });
    }
  }
  const body: Json = { contents };
  if (spec.system !== undefined) body.systemInstruction = { parts: spec.system.map((text) => ({ text })) };
  if (spec.tools !== undefined) {
    body.tools = [
      { functionDeclarations: spec.tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })) },
    ];
  }
  if (spec.toolChoice === "auto") body.toolConfig = { functionCallingConfig: { mode: "AUTO" } };
  else if (spec.toolChoice === "required") body.toolConfig = { functionCallingConfig: { mode: "ANY" } };
  else if (spec.toolChoice === "none") body.toolConfig = { functionCallingConfig: { mode: "NONE" } };
  else if (spec.toolChoice !== undefined) {
    body.toolConfig = { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [spec.toolChoice.name] } };
  }
  const params = spec.params ?? {};
  const config: Json = {};
  if (params.maxTokens !== undefined) config.maxOutputTokens = params.maxTokens;
  if (params.temperature !== undefined) config.temperature = params.temperature;
  if (params.topP !== undefined) config.topP = params.topP;
  if (params.topK !== undefined) config.topK = params.topK;
  if (params.stop !== undefined) config.stopSequences = params.stop;
  if (params.seed !== undefined) config.seed = params.seed;
  if (params.presencePenalty !== undefined) config.presencePenalty = params.presencePenalty;
  if (params.frequencyPenalty !== undefined) config.frequencyPenalty = params.frequencyPenalty;
  if (params.effort !== undefined) config.thinkingConfig = { thinkingLevel: params.effort };
  if (spec.jsonSchema !== undefined) {
    config.responseMimeType = "application/json";
    config.responseSchema = spec.jsonSchema.schema;
  }
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

const BUILDERS: Record<ProtocolId, (spec: ConversationSpec) => Json> = {
  "openai-chat": chatBody,
  "openai-responses": responsesBody,
  "anthropic-messages": anthropicBody,
  "google-generate-content": geminiBody,
};

export function clientBody(protocol: ProtocolId, spec: ConversationSpec): Json {
  return BUILDERS[protocol](spec);
}

/** Gemini puts model and stream in the URL; the HTTP layer injects them. */
export function decodeClientBody(protocol: ProtocolId, body: Json): DecodedRequest {
  const injected = protocol === "google-generate-content" ? { model: CLIENT_MODEL, stream: false } : undefined;
  return decodeClientRequest(protocol, JSON.stringify(body), injected);
}

/** Gemini clients have no call ids: the decoder synthesises them, so exact ids are only comparable elsewhere. */
export function clientHasCallIds(protocol: ProtocolId): boolean {
  return protocol !== "google-generate-content";
}
