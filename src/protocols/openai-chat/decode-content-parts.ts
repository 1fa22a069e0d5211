import { IrDecodeError, type IrContentPart, type IrWarning } from "../../ir";
import { audioMediaType, parseDataUrl } from "../shared/data-url";
import { optionalString, requireRecord } from "../openai-shared/read-fields";

/**
 * Chat message content: a string or an array of parts (`text`, `image_url`,
 * `input_audio`, `file`, and `refusal` on assistant turns), per
 * platform.openai.com/docs/api-reference/chat/create#messages. Unknown part types are
 * skipped with a warning (so a new part type degrades instead of failing).
 */
export function decodeChatContent(content: unknown, path: string, warnings: IrWarning[]): IrContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new IrDecodeError(`${path} must be a string or an array of content parts`);
  const parts: IrContentPart[] = [];
  content.forEach((value, index) => {
    const part = decodeChatContentPart(requireRecord(value, `${path}[${index}]`), `${path}[${index}]`, warnings);
    if (part !== undefined) parts.push(part);
  });
  return parts;
}

function decodeChatContentPart(part: Record<string, unknown>, path: string, warnings: IrWarning[]): IrContentPart | undefined {
  switch (part.type) {
    case "text":
      return { type: "text", text: requiredString(part.text, `${path}.text`) };
    case "refusal":
      return { type: "text", text: requiredString(part.refusal, `${path}.refusal`) };
    case "image_url":
      return decodeImageUrl(part.image_url, `${path}.image_url`);
    case "input_audio": {
      const audio = requireRecord(part.input_audio, `${path}.input_audio`);
      const format = requiredString(audio.format, `${path}.input_audio.format`);
      return { type: "file", mediaType: audioMediaType(format), data: requiredString(audio.data, `${path}.input_audio.data`) };
    }
    case "file":
      return decodeFile(requireRecord(part.file, `${path}.file`), path, warnings);
    default:
      if (typeof part.type !== "string") throw new IrDecodeError(`${path}.type must be a string`);
      warnings.push({ code: "dropped_content", field: path, message: `content part type "${part.type}" is not supported; skipped` });
      return undefined;
  }
}

function decodeImageUrl(value: unknown, path: string): IrContentPart {
  // Older clients send `image_url` as a bare string; the documented form is `{url, detail?}`.
  const imageUrl = typeof value === "string" ? { url: value } : requireRecord(value, path);
  const url = requiredString(imageUrl.url, `${path}.url`);
  const detail = optionalString(imageUrl.detail, `${path}.detail`);
  const inline = parseDataUrl(url);
  const image: IrContentPart = inline
    ? { type: "image", mediaType: inline.mediaType, data: inline.data }
    : { type: "image", url };
  if (detail !== undefined) image.detail = detail;
  return image;
}

function decodeFile(file: Record<string, unknown>, path: string, warnings: IrWarning[]): IrContentPart | undefined {
  const fileData = optionalString(file.file_data, `${path}.file.file_data`);
  const filename = optionalString(file.filename, `${path}.file.filename`);
  if (fileData === undefined) {
    // `file_id` points into OpenAI's file store, which no other upstream can read.
    warnings.push({ code: "dropped_content", field: `${path}.file.file_id`, message: "file_id references are not supported; send file_data" });
    return undefined;
  }
  const inline = parseDataUrl(fileData);
  const part: IrContentPart = inline
    ? { type: "file", mediaType: inline.mediaType, data: inline.data }
    : { type: "file", data: fileData };
  if (filename !== undefined) part.filename = filename;
  return part;
}

export function requiredString(value: unknown, path: string): string {
  if (typeof value !== "string") throw new IrDecodeError(`${path} must be a string`);
  return value;
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
