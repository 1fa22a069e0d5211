import { splitToolResults } from "../shared/split-tool-results";
import { IrDecodeError, type IrContentPart, type IrMessage, type IrToolResultPart, type IrWarning } from "../../ir";
import { isRecord, readString, requireString, type JsonObject } from "../shared/json-fields";

/** Per-request decoder state: warnings, and synthesised call ids awaiting their functionResponse. */
export interface GeminiDecodeState {
  warnings: IrWarning[];
  /** function name -> ids of calls not yet answered, oldest first. */
  openCalls: Map<string, string[]>;
}

/**
 * Gemini function calls usually carry no id, so one is synthesised from the call's
 * position (`call_<content>_<part>`): deterministic, unique within the request, and the
 * same every time the client replays the history.
 */
function syntheticCallId(messageIndex: number, partIndex: number): string {
  return `call_${messageIndex}_${partIndex}`;
}

/**
 * functionResponse.response -> IR output. `{result: "…"}` / `{output: "…"}` unwrap to the
 * string; `{error: …}` marks an error result (the convention the FunctionResponse docs
 * describe: https://ai.google.dev/api/caching#FunctionResponse); any other object is JSON text.
 */
function decodeFunctionOutput(response: JsonObject): Pick<IrToolResultPart, "output" | "isError"> {
  const keys = Object.keys(response);
  const only = keys.length === 1 ? keys[0] : undefined;
  if ((only === "result" || only === "output") && typeof response[only] === "string") return { output: response[only] };
  if (only === "error") {
    const error = response.error;
    return { output: typeof error === "string" ? error : JSON.stringify(error), isError: true };
  }
  return { output: JSON.stringify(response) };
}

function decodePart(part: unknown, path: string, messageIndex: number, partIndex: number, state: GeminiDecodeState): IrContentPart[] {
  if (!isRecord(part)) throw new IrDecodeError(`${path} must be an object`);
  const signature = readString(part, "thoughtSignature", `${path}.thoughtSignature`);
  if (part.text !== undefined) {
    const text = readString(part, "text", `${path}.text`) ?? "";
    if (part.thought === true) {
      return signature === undefined
        ? [{ type: "reasoning", text }]
        : [{ type: "reasoning", text, signature, signatureProtocol: "google-generate-content" }];
    }
    // Gemini 3 may sign an ordinary text part; the signature rides in an empty reasoning part before it.
    const parts: IrContentPart[] = [];
    if (signature !== undefined) parts.push({ type: "reasoning", text: "", signature, signatureProtocol: "google-generate-content" });
    if (text !== "") parts.push({ type: "text", text });
    return parts;
  }
  if (isRecord(part.inlineData)) {
    const mediaType = readString(part.inlineData, "mimeType", `${path}.inlineData.mimeType`);
    const data = readString(part.inlineData, "data", `${path}.inlineData.data`);
    if (mediaType === undefined || data === undefined) throw new IrDecodeError(`${path}.inlineData needs mimeType and data`);
    return [mediaType.startsWith("image/") ? { type: "image", mediaType, data } : { type: "file", mediaType, data }];
  }
  if (isRecord(part.fileData)) {
    const url = requireString(part.fileData, "fileUri", `${path}.fileData.fileUri`);
    const mediaType = readString(part.fileData, "mimeType", `${path}.fileData.mimeType`);
    const type = mediaType?.startsWith("image/") === true ? "image" : "file";
    return [mediaType === undefined ? { type, url } : { type, url, mediaType }];
  }
  if (isRecord(part.functionCall)) {
    const call = part.functionCall;
    const name = requireString(call, "name", `${path}.functionCall.name`);
    const args = call.args ?? {};
    if (!isRecord(args)) throw new IrDecodeError(`${path}.functionCall.args must be an object`);
    const id = readString(call, "id", `${path}.functionCall.id`) ?? syntheticCallId(messageIndex, partIndex);
    state.openCalls.set(name, [...(state.openCalls.get(name) ?? []), id]);
    const toolCall: IrContentPart = { type: "tool_call", id, name, arguments: JSON.stringify(args) };
    if (signature !== undefined) toolCall.signature = signature;
    return [toolCall];
  }
  if (isRecord(part.functionResponse)) {
    const response = part.functionResponse;
    const name = requireString(response, "name", `${path}.functionResponse.name`);
    const output = response.response ?? {};
    if (!isRecord(output)) throw new IrDecodeError(`${path}.functionResponse.response must be an object`);
    // Match the oldest unanswered call of that name, so the result points at its synthesised id;
    // the name itself is the last resort.
    const explicitId = readString(response, "id", `${path}.functionResponse.id`);
    const waiting = state.openCalls.get(name);
    const callId = explicitId ?? waiting?.shift() ?? name;
    if (explicitId !== undefined && waiting !== undefined) state.openCalls.set(name, waiting.filter((id) => id !== explicitId));
    return [{ type: "tool_result", callId, toolName: name, ...decodeFunctionOutput(output) }];
  }
  state.warnings.push({ code: "dropped_content", field: path, message: "unsupported part (executableCode, codeExecutionResult, …) skipped" });
  return [];
}

/**
 * `contents` -> IR messages: role user or absent -> user, model ->
 * assistant, function/tool -> tool; functionResponse parts are split out into their own
 * tool messages wherever they appear.
 */
export function decodeGeminiContents(contents: unknown[], state: GeminiDecodeState): IrMessage[] {
  const messages: IrMessage[] = [];
  contents.forEach((content, messageIndex) => {
    const path = `contents[${messageIndex}]`;
    if (!isRecord(content)) throw new IrDecodeError(`${path} must be an object`);
    const role = content.role ?? "user";
    if (role !== "user" && role !== "model" && role !== "function" && role !== "tool") {
      throw new IrDecodeError(`${path}.role must be "user", "model", "function" or "tool"`);
    }
    if (!Array.isArray(content.parts)) throw new IrDecodeError(`${path}.parts must be an array`);
    const irRole = role === "model" ? "assistant" : "user";
    const parts = content.parts.flatMap((part, partIndex) => decodePart(part, `${path}.parts[${partIndex}]`, messageIndex, partIndex, state));
    messages.push(...splitToolResults(irRole, parts));
  });
  return messages;
}
