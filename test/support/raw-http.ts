import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One HTTP/1.1 request written byte for byte over a socket (`Connection: close`), for
 * what fetch would normalize away: dot segments, raw `%00`, odd request targets,
 * hand-made chunked bodies. `head` is everything before the body, without the blank line.
 */
export function rawHttp(baseUrl: string, head: string, body: string | Uint8Array = "", timeoutMs = 10_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`${head}\r\nConnection: close\r\n\r\n`);
      if (body.length > 0) socket.write(body);
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms: ${Buffer.concat(chunks).toString("latin1").slice(0, 200)}`));
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    // A server that answers early may reset the connection while the body is still being written.
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      if (split === -1) return reject(new Error(`no HTTP response: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let payload = text.slice(split + 4);
      if (headers["transfer-encoding"]?.includes("chunked")) payload = dechunk(payload);
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body: payload });
    });
  });
}

function dechunk(text: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const lineEnd = text.indexOf("\r\n", at);
    if (lineEnd === -1) return out;
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (!size) return out;
    out += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** A body in HTTP/1.1 chunked framing (no Content-Length), split into `pieceBytes` chunks. */
export function chunkedBody(body: string, pieceBytes = 64 * 1024): string {
  let out = "";
  for (let at = 0; at < body.length; at += pieceBytes) {
    const piece = body.slice(at, at + pieceBytes);
    out += `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`;
  }
  return `${out}0\r\n\r\n`;
}
