/**
 * UTF-8 bytes of a text: the relayed output's measure for metering. No tokenizer an
 * upstream uses makes more tokens than bytes (byte-level BPE, SentencePiece with byte
 * fallback), so an estimate counted in bytes never undercounts, whatever the script:
 * CJK (3 bytes a character), emoji (4), base64 or code (1) alike.
 */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
