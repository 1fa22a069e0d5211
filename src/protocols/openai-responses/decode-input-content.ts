import type { IrContentPart, IrWarning } from "../../ir";
import { decodeInputAudio, decodeOpenAiContent, imageAt, inlineFile, skipUnknownPart } from "../openai-shared/decode-content";
import { optionalString, requiredString } from "../openai-shared/read-fields";

/**
 * Responses message content: a string or parts — `input_text` / `output_text` / `text`,
 * `refusal`, `input_image`, `input_file`, `input_audio`
 * (platform.openai.com/docs/api-reference/responses/create#input). `file_id` references
 * point into OpenAI's file store and cannot be read by other upstreams: skipped with a warning.
 */
export function decodeResponsesContent(content: unknown, path: string, warnings: IrWarning[]): IrContentPart[] {
  return decodeOpenAiContent(content, path, warnings, decodePart);
}

function decodePart(part: Record<string, unknown>, path: string, warnings: IrWarning[]): IrContentPart | undefined {
  switch (part.type) {
    case "input_text":
    case "output_text":
    case "text":
      return { type: "text", text: requiredString(part.text, `${path}.text`) };
    case "refusal":
      return { type: "text", text: requiredString(part.refusal, `${path}.refusal`) };
    case "input_image": {
      const url = optionalString(part.image_url, `${path}.image_url`);
      if (url === undefined) return skipFileId(path, warnings);
      return imageAt(url, optionalString(part.detail, `${path}.detail`));
    }
    case "input_file": {
      const fileData = optionalString(part.file_data, `${path}.file_data`);
      const fileUrl = optionalString(part.file_url, `${path}.file_url`);
      let file: IrContentPart;
      if (fileData !== undefined) file = inlineFile(fileData);
      else if (fileUrl !== undefined) file = { type: "file", url: fileUrl };
      else return skipFileId(path, warnings);
      const filename = optionalString(part.filename, `${path}.filename`);
      if (filename !== undefined) file.filename = filename;
      return file;
    }
    case "input_audio":
      return decodeInputAudio(part, path);
    default:
      return skipUnknownPart(part, path, warnings);
  }
}

function skipFileId(path: string, warnings: IrWarning[]): undefined {
  warnings.push({ code: "dropped_content", field: `${path}.file_id`, message: "file_id references are not supported; send the data inline" });
  return undefined;
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
