/**
 * Data URLs (`data:<media type>;base64,<payload>`, RFC 2397) are how both OpenAI
 * protocols inline images and files; the IR keeps the bare base64 payload and the
 * media type apart so Anthropic and Gemini encoders can use them directly.
 */
export interface InlineData {
  mediaType: string;
  data: string;
}

const PREFIX = "data:";
const BASE64_MARKER = ";base64";

/**
 * Splits a base64 data URL, its media type as written (parameters included, possibly
 * empty); undefined for anything else (plain URLs included). The Anthropic and Gemini
 * encoders send that media type on as it is.
 */
export function splitDataUrl(url: string): InlineData | undefined {
  if (!url.startsWith(PREFIX)) return undefined;
  const comma = url.indexOf(",");
  if (comma === -1) return undefined;
  const header = url.slice(PREFIX.length, comma);
  if (!header.endsWith(BASE64_MARKER)) return undefined;
  return { mediaType: header.slice(0, header.length - BASE64_MARKER.length), data: url.slice(comma + 1) };
}

/** Splits a base64 data URL into the bare media type (`application/octet-stream` when none is named) and the payload. */
export function parseDataUrl(url: string): InlineData | undefined {
  const inline = splitDataUrl(url);
  if (inline === undefined) return undefined;
  // Parameters such as `;charset=utf-8` may sit between the media type and `;base64`.
  const mediaType = inline.mediaType.split(";")[0] ?? "";
  return { mediaType: mediaType === "" ? "application/octet-stream" : mediaType, data: inline.data };
}

export function toDataUrl(mediaType: string | undefined, data: string): string {
  return `${PREFIX}${mediaType ?? "application/octet-stream"}${BASE64_MARKER},${data}`;
}

/** OpenAI's `input_audio.format` values are the audio subtype (`wav`, `mp3`). */
export function audioFormatOf(mediaType: string | undefined): string | undefined {
  if (mediaType === undefined || !mediaType.startsWith("audio/")) return undefined;
  const subtype = mediaType.slice("audio/".length);
  return subtype === "mpeg" ? "mp3" : subtype;
}

export function audioMediaType(format: string): string {
  return format === "mp3" ? "audio/mpeg" : `audio/${format}`;
}
