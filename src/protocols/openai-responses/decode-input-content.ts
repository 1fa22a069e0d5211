import { IrDecodeError, type IrContentPart, type IrWarning } from "../../ir";
import { audioMediaType, parseDataUrl } from "../shared/data-url";
import { optionalString, requireRecord } from "../openai-shared/read-fields";

/**
 * Responses message content: a string or parts — `input_text` / `output_text` / `text`,
 * `refusal`, `input_image`, `input_file`, `input_audio`
 * (platform.openai.com/docs/api-reference/responses/create#input). `file_id` references
 * point into OpenAI's file store and cannot be read by other upstreams: skipped with a warning.
 */
export function decodeResponsesContent(content: unknown, path: string, warnings: IrWarning[]): IrContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) throw new IrDecodeError(`${path} must be a string or an array of content parts`);
  const parts: IrContentPart[] = [];
  content.forEach((value, index) => {
    const partPath = `${path}[${index}]`;
    const part = decodePart(requireRecord(value, partPath), partPath, warnings);
    if (part !== undefined) parts.push(part);
  });
  return parts;
}

function decodePart(part: Record<string, unknown>, path: string, warnings: IrWarning[]): IrContentPart | undefined {
  switch (part.type) {
    case "input_text":
    case "output_text":
    case "text":
      return { type: "text", text: stringField(part.text, `${path}.text`) };
    case "refusal":
      return { type: "text", text: stringField(part.refusal, `${path}.refusal`) };
    case "input_image": {
      const url = optionalString(part.image_url, `${path}.image_url`);
      if (url === undefined) return skipFileId(path, warnings);
      const inline = parseDataUrl(url);
      const image: IrContentPart = inline ? { type: "image", mediaType: inline.mediaType, data: inline.data } : { type: "image", url };
      const detail = optionalString(part.detail, `${path}.detail`);
      if (detail !== undefined) image.detail = detail;
      return image;
    }
    case "input_file": {
      const fileData = optionalString(part.file_data, `${path}.file_data`);
      const fileUrl = optionalString(part.file_url, `${path}.file_url`);
      let file: IrContentPart;
      if (fileData !== undefined) {
        const inline = parseDataUrl(fileData);
        file = inline ? { type: "file", mediaType: inline.mediaType, data: inline.data } : { type: "file", data: fileData };
      } else if (fileUrl !== undefined) file = { type: "file", url: fileUrl };
      else return skipFileId(path, warnings);
      const filename = optionalString(part.filename, `${path}.filename`);
      if (filename !== undefined) file.filename = filename;
      return file;
    }
    case "input_audio": {
      const audio = requireRecord(part.input_audio, `${path}.input_audio`);
      const format = stringField(audio.format, `${path}.input_audio.format`);
      return { type: "file", mediaType: audioMediaType(format), data: stringField(audio.data, `${path}.input_audio.data`) };
    }
    default:
      if (typeof part.type !== "string") throw new IrDecodeError(`${path}.type must be a string`);
      warnings.push({ code: "dropped_content", field: path, message: `content part type "${part.type}" is not supported; skipped` });
      return undefined;
  }
}

function skipFileId(path: string, warnings: IrWarning[]): undefined {
  warnings.push({ code: "dropped_content", field: `${path}.file_id`, message: "file_id references are not supported; send the data inline" });
  return undefined;
}

export function stringField(value: unknown, path: string): string {
  if (typeof value !== "string") throw new IrDecodeError(`${path} must be a string`);
  return value;
}

/** Text of system/developer content: a string or text parts joined with "\n". */
export function decodeResponsesText(content: unknown, path: string, warnings: IrWarning[]): string {
  const texts: string[] = [];
  decodeResponsesContent(content, path, warnings).forEach((part, index) => {
    if (part.type === "text") texts.push(part.text);
    else warnings.push({ code: "dropped_content", field: `${path}[${index}]`, message: "system content carries text only; skipped" });
  });
  return texts.join("\n");
}
