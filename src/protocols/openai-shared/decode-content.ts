import { IrDecodeError, type IrContentPart, type IrFilePart, type IrImagePart, type IrWarning } from "../../ir";
import { audioMediaType, parseDataUrl } from "../shared/data-url";
import { requireRecord, requiredString, type JsonObject } from "./read-fields";

/** Reads one content part of a wire; undefined when the part is skipped (with a warning). */
export type ContentPartDecoder = (part: JsonObject, path: string, warnings: IrWarning[]) => IrContentPart | undefined;

/**
 * Message content as both OpenAI wires accept it: absent (no parts), a string (one text
 * part; none when empty), or an array of parts, each read by the wire's `decodePart`.
 */
export function decodeOpenAiContent(content: unknown, path: string, warnings: IrWarning[], decodePart: ContentPartDecoder): IrContentPart[] {
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

/** A part type the wire's decoder does not know is skipped with a warning, so a new part type degrades instead of failing. */
export function skipUnknownPart(part: JsonObject, path: string, warnings: IrWarning[]): undefined {
  if (typeof part.type !== "string") throw new IrDecodeError(`${path}.type must be a string`);
  warnings.push({ code: "dropped_content", field: path, message: `content part type "${part.type}" is not supported; skipped` });
  return undefined;
}

/** An image at `url`: a data URL becomes inline data, any other URL stays one. */
export function imageAt(url: string, detail: string | undefined): IrImagePart {
  const inline = parseDataUrl(url);
  const image: IrImagePart = inline ? { type: "image", mediaType: inline.mediaType, data: inline.data } : { type: "image", url };
  if (detail !== undefined) image.detail = detail;
  return image;
}

/** Inline file data: a data URL gives the media type and the payload, anything else is taken as bare base64. */
export function inlineFile(fileData: string): IrFilePart {
  const inline = parseDataUrl(fileData);
  return inline ? { type: "file", mediaType: inline.mediaType, data: inline.data } : { type: "file", data: fileData };
}

/** `input_audio: {data, format}`, spelled the same on both wires. */
export function decodeInputAudio(part: JsonObject, path: string): IrFilePart {
  const audio = requireRecord(part.input_audio, `${path}.input_audio`);
  const format = requiredString(audio.format, `${path}.input_audio.format`);
  return { type: "file", mediaType: audioMediaType(format), data: requiredString(audio.data, `${path}.input_audio.data`) };
}
