import { IrDecodeError, type IrContentPart, type IrWarning } from "../../ir";
import { decodeInputAudio, decodeOpenAiContent, imageAt, inlineFile, skipUnknownPart } from "../openai-shared/decode-content";
import { optionalString, requiredString, requireRecord } from "../openai-shared/read-fields";

/**
 * Chat message content: a string or an array of parts (`text`, `image_url`,
 * `input_audio`, `file`, and `refusal` on assistant turns), per
 * platform.openai.com/docs/api-reference/chat/create#messages. Unknown part types are
 * skipped with a warning (so a new part type degrades instead of failing).
 */
export function decodeChatContent(content: unknown, path: string, warnings: IrWarning[]): IrContentPart[] {
  return decodeOpenAiContent(content, path, warnings, decodeChatContentPart);
}

function decodeChatContentPart(part: Record<string, unknown>, path: string, warnings: IrWarning[]): IrContentPart | undefined {
  switch (part.type) {
    case "text":
      return { type: "text", text: requiredString(part.text, `${path}.text`) };
    case "refusal":
      return { type: "text", text: requiredString(part.refusal, `${path}.refusal`) };
    case "image_url":
      return decodeImageUrl(part.image_url, `${path}.image_url`);
    case "input_audio":
      return decodeInputAudio(part, path);
    case "file":
      return decodeFile(requireRecord(part.file, `${path}.file`), path, warnings);
    default:
      return skipUnknownPart(part, path, warnings);
  }
}

function decodeImageUrl(value: unknown, path: string): IrContentPart {
  // Older clients send `image_url` as a bare string; the documented form is `{url, detail?}`.
  const imageUrl = typeof value === "string" ? { url: value } : requireRecord(value, path);
  const url = requiredString(imageUrl.url, `${path}.url`);
  return imageAt(url, optionalString(imageUrl.detail, `${path}.detail`));
}

function decodeFile(file: Record<string, unknown>, path: string, warnings: IrWarning[]): IrContentPart | undefined {
  const fileData = optionalString(file.file_data, `${path}.file.file_data`);
  const filename = optionalString(file.filename, `${path}.file.filename`);
  if (fileData === undefined) {
    // `file_id` points into OpenAI's file store, which no other upstream can read.
    warnings.push({ code: "dropped_content", field: `${path}.file.file_id`, message: "file_id references are not supported; send file_data" });
    return undefined;
  }
  const part = inlineFile(fileData);
  if (filename !== undefined) part.filename = filename;
  return part;
}

/** System/developer content: a string or text parts, joined with "\n" like separate system messages. */
export function decodeChatTextContent(content: unknown, path: string): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new IrDecodeError(`${path} must be a string or an array of text parts`);
  return content
    .map((value, index) => {
      const part = requireRecord(value, `${path}[${index}]`);
      if (part.type !== "text") throw new IrDecodeError(`${path}[${index}] must be a text part`);
      return requiredString(part.text, `${path}[${index}].text`);
    })
    .join("\n");
}
