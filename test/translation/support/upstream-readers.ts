/**
 * Reads an upstream request body, in each protocol's own wire shape, back into a flat
 * protocol-neutral list of what the upstream will see. Written against the public API
 * shapes, not against the encoders, so the pair tests compare
 * wire fields rather than the IR.
 */
import type { ProtocolId } from "../../../src/ir";
import type { Json } from "./client-bodies";

export type SeenItem =
  | { kind: "user_text"; text: string }
  | { kind: "image"; mediaType?: string; data?: string; url?: string }
  | { kind: "assistant_text"; text: string }
  | { kind: "call"; id?: string; name: string; args: unknown }
  | { kind: "result"; id?: string; name?: string; output: string };

export interface SeenRequest {
  system?: string;
  items: SeenItem[];
  /** Message roles in wire order (after any merging the encoder did). */
  roles: string[];
}

function record(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function fromDataUrl(url: string): SeenItem {
  if (url.startsWith("data:")) {
    const comma = url.indexOf(",");
    const header = url.slice(5, comma);
    return { kind: "image", mediaType: header.replace(/;base64$/, ""), data: url.slice(comma + 1) };
  }
  return { kind: "image", url };
}

function textOfParts(value: unknown): string {
  if (typeof value === "string") return value;
  return list(value)
    .map((part) => str(record(part).text) ?? "")
    .join("");
}

function readChat(body: Json): SeenRequest {
  const items: SeenItem[] = [];
  const roles: string[] = [];
  const system: string[] = [];
  let leading = true;
  for (const value of list(body.messages)) {
    const message = record(value);
    const role = str(message.role) ?? "?";
    if (leading && (role === "system" || role === "developer")) {
      system.push(textOfParts(message.content));
      continue;
    }
    leading = false;
    roles.push(role);
    if (role === "user") {
      if (typeof message.content === "string") items.push({ kind: "user_text", text: message.content });
      for (const part of list(message.content).map(record)) {
        if (part.type === "text") items.push({ kind: "user_text", text: str(part.text) ?? "" });
        else if (part.type === "image_url") items.push(fromDataUrl(str(record(part.image_url).url) ?? ""));
        else items.push({ kind: "user_text", text: `<unexpected ${String(part.type)}>` });
      }
    } else if (role === "assistant") {
      const text = textOfParts(message.content);
      if (text !== "") items.push({ kind: "assistant_text", text });
      for (const call of list(message.tool_calls).map(record)) {
        const fn = record(call.function);
        items.push({ kind: "call", id: str(call.id), name: str(fn.name) ?? "", args: JSON.parse(str(fn.arguments) ?? "null") });
      }
    } else if (role === "tool") {
      items.push({ kind: "result", id: str(message.tool_call_id), output: textOfParts(message.content) });
    }
  }
  return { ...(system.length > 0 ? { system: system.join("\n") } : {}), items, roles };
}

function readResponses(body: Json): SeenRequest {
  const items: SeenItem[] = [];
  const roles: string[] = [];
  const system: string[] = [];
  if (typeof body.instructions === "string") system.push(body.instructions);
  for (const value of list(body.input)) {
    const item = record(value);
    const type = str(item.type) ?? "message";
    if (type === "message") {
      const role = str(item.role) ?? "?";
      if (role === "system" || role === "developer") {
        system.push(textOfParts(item.content));
        continue;
      }
      roles.push(role);
      if (typeof item.content === "string") {
        items.push({ kind: role === "assistant" ? "assistant_text" : "user_text", text: item.content });
        continue;
      }
      for (const part of list(item.content).map(record)) {
        if (part.type === "input_text") items.push({ kind: "user_text", text: str(part.text) ?? "" });
        else if (part.type === "output_text") items.push({ kind: "assistant_text", text: str(part.text) ?? "" });
        else if (part.type === "input_image") items.push(fromDataUrl(str(part.image_url) ?? ""));
        else items.push({ kind: "user_text", text: `<unexpected ${String(part.type)}>` });
      }
    } else if (type === "function_call") {
      roles.push("function_call");
      items.push({ kind: "call", id: str(item.call_id), name: str(item.name) ?? "", args: JSON.parse(str(item.arguments) ?? "null") });
    } else if (type === "function_call_output") {
      roles.push("function_call_output");
      items.push({ kind: "result", id: str(item.call_id), output: textOfParts(item.output) });
    } else roles.push(type);
  }
  return { ...(system.length > 0 ? { system: system.join("\n") } : {}), items, roles };
}

function readAnthropic(body: Json): SeenRequest {
  const items: SeenItem[] = [];
  const roles: string[] = [];
  const system = typeof body.system === "string" ? body.system : Array.isArray(body.system) ? list(body.system).map((block) => str(record(block).text) ?? "").join("\n") : undefined;
  for (const value of list(body.messages)) {
    const message = record(value);
    const role = str(message.role) ?? "?";
    roles.push(role);
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : list(message.content).map(record);
    for (const block of blocks) {
      if (block.type === "text") items.push({ kind: role === "assistant" ? "assistant_text" : "user_text", text: str(block.text) ?? "" });
      else if (block.type === "image") {
        const source = record(block.source);
        items.push(
          source.type === "url"
            ? { kind: "image", url: str(source.url) ?? "" }
            : { kind: "image", mediaType: str(source.media_type) ?? "", data: str(source.data) ?? "" },
        );
      } else if (block.type === "tool_use") items.push({ kind: "call", id: str(block.id), name: str(block.name) ?? "", args: block.input });
      else if (block.type === "tool_result") items.push({ kind: "result", id: str(block.tool_use_id), output: textOfParts(block.content ?? "") });
    }
  }
  return { ...(system !== undefined ? { system } : {}), items, roles };
}

function readGemini(body: Json): SeenRequest {
  const items: SeenItem[] = [];
  const roles: string[] = [];
  const instruction = record(body.systemInstruction);
  const system = Array.isArray(instruction.parts) ? list(instruction.parts).map((part) => str(record(part).text) ?? "").join("\n") : undefined;
  for (const value of list(body.contents)) {
    const content = record(value);
    const role = str(content.role) ?? "user";
    roles.push(role);
    for (const part of list(content.parts).map(record)) {
      if (typeof part.text === "string" && part.thought !== true) {
        items.push({ kind: role === "model" ? "assistant_text" : "user_text", text: part.text });
      } else if (part.inlineData !== undefined) {
        const inline = record(part.inlineData);
        items.push({ kind: "image", mediaType: str(inline.mimeType) ?? "", data: str(inline.data) ?? "" });
      } else if (part.fileData !== undefined) {
        items.push({ kind: "image", url: str(record(part.fileData).fileUri) ?? "" });
      } else if (part.functionCall !== undefined) {
        const call = record(part.functionCall);
        const id = str(call.id);
        items.push({ kind: "call", ...(id !== undefined ? { id } : {}), name: str(call.name) ?? "", args: call.args });
      } else if (part.functionResponse !== undefined) {
        const response = record(part.functionResponse);
        const payload = record(response.response);
        const keys = Object.keys(payload);
        const output = keys.length === 1 && keys[0] === "result" && typeof payload.result === "string" ? payload.result : JSON.stringify(payload);
        const id = str(response.id);
        items.push({ kind: "result", ...(id !== undefined ? { id } : {}), name: str(response.name) ?? "", output });
      }
    }
  }
  return { ...(system !== undefined ? { system } : {}), items, roles };
}

const READERS: Record<ProtocolId, (body: Json) => SeenRequest> = {
  "openai-chat": readChat,
  "openai-responses": readResponses,
  "anthropic-messages": readAnthropic,
  "google-generate-content": readGemini,
};

export function readUpstreamBody(protocol: ProtocolId, body: Json): SeenRequest {
  return READERS[protocol](body);
}
