/**
 * Child process: the bare proxy (bare-proxy.ts), except that it calls the upstream with a
 * minimal HTTP/1.1 client of its own over `Bun.connect` (keep-alive connections, a pool per
 * process) instead of `fetch`. `fetch` hands every call to Bun's HTTP-client thread and its
 * answer back to the request thread; a client over the event loop's own sockets does its
 * parsing in JavaScript on the request thread instead. relay-floor.ts measures the two side
 * by side (`RELAYS=` with `SCRIPT=socket-proxy.ts`): what the runtime's `fetch` costs a
 * relay, against what a client in JavaScript costs. A measurement only: no TLS, no
 * redirects, no timeouts, no compression, one upstream.
 *
 *   bun test/bench/socket-proxy.ts <upstream base URL, e.g. http://127.0.0.1:1234/v1>
 */
const upstream = process.argv[2];
if (upstream === undefined) throw new Error("usage: bun test/bench/socket-proxy.ts <upstream base URL>");
const base = new URL(upstream);
const path = `${base.pathname.replace(/\/$/, "")}/chat/completions`;
const host = base.hostname;
const port = Number(base.port);

const CRLF2 = Buffer.from("\r\n\r\n");

/** One answer's head, and its body delivered chunk by chunk (`onBody`), then `onEnd`. */
interface Exchange {
  onHead(status: number, contentType: string): void;
  onBody(chunk: Uint8Array): void;
  onEnd(): void;
  onError(error: Error): void;
}

/** Parses one connection's answers: the head, then a Content-Length or chunked body. */
class Connection {
  private pending: Buffer | undefined;
  private exchange: Exchange | undefined;
  private state: "head" | "length" | "chunk-size" | "chunk-data" | "chunk-end" | "trailer" = "head";
  private remaining = 0;
  socket!: import("bun").Socket<Connection>;

  start(exchange: Exchange, request: Uint8Array): void {
    this.exchange = exchange;
    this.state = "head";
    if (this.socket.write(request) !== request.byteLength) throw new Error("short write (the bench's requests are small)");
  }

  data(chunk: Buffer): void {
    const bytes = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = undefined;
    let at = 0;
    while (at < bytes.length && this.exchange !== undefined) {
      switch (this.state) {
        case "head": {
          const end = bytes.indexOf(CRLF2, at);
          if (end < 0) return void (this.pending = bytes.subarray(at));
          const head = bytes.toString("latin1", at, end);
          at = end + 4;
          const status = Number(head.slice(9, 12));
          let contentType = "application/json";
          let length = -1;
          let chunked = false;
          for (const line of head.split("\r\n").slice(1)) {
            const colon = line.indexOf(":");
            const name = line.slice(0, colon).toLowerCase();
            const value = line.slice(colon + 1).trim();
            if (name === "content-length") length = Number(value);
            else if (name === "transfer-encoding") chunked = value.toLowerCase().includes("chunked");
            else if (name === "content-type") contentType = value;
          }
          this.exchange.onHead(status, contentType);
          if (chunked) this.state = "chunk-size";
          else if (length > 0) {
            this.state = "length";
            this.remaining = length;
          } else this.finish();
          break;
        }
        case "length": {
          at = this.passBody(bytes, at);
          if (this.remaining === 0) this.finish();
          break;
        }
        case "chunk-size": {
          const end = bytes.indexOf("\r\n", at);
          if (end < 0) return void (this.pending = bytes.subarray(at));
          this.remaining = parseInt(bytes.toString("latin1", at, end), 16);
          at = end + 2;
          this.state = this.remaining === 0 ? "trailer" : "chunk-data";
          break;
        }
        case "chunk-data": {
          at = this.passBody(bytes, at);
          if (this.remaining === 0) this.state = "chunk-end";
          break;
        }
        case "chunk-end":
        case "trailer": {
          if (bytes.length - at < 2) return void (this.pending = bytes.subarray(at));
          at += 2;
          if (this.state === "trailer") this.finish();
          else this.state = "chunk-size";
          break;
        }
      }
    }
    if (at < bytes.length) this.pending = bytes.subarray(at);
  }

  /** Hands on the body bytes from `at`, up to what is `remaining` of the body or chunk; returns where it stopped. */
  private passBody(bytes: Buffer, at: number): number {
    const take = Math.min(this.remaining, bytes.length - at);
    this.exchange!.onBody(bytes.subarray(at, at + take));
    this.remaining -= take;
    return at + take;
  }

  private finish(): void {
    const exchange = this.exchange!;
    this.exchange = undefined;
    idle.push(this);
    exchange.onEnd();
  }

  fail(error: Error): void {
    const exchange = this.exchange;
    this.exchange = undefined;
    const at = idle.indexOf(this);
    if (at >= 0) idle.splice(at, 1);
    exchange?.onError(error);
  }
}

const idle: Connection[] = [];

async function connection(): Promise<Connection> {
  const kept = idle.pop();
  if (kept !== undefined) return kept;
  const fresh = new Connection();
  fresh.socket = await Bun.connect<Connection>({
    hostname: host,
    port,
    data: fresh,
    socket: {
      data: (socket, chunk) => socket.data.data(chunk),
      close: (socket) => socket.data.fail(new Error("upstream closed the connection")),
      error: (socket, error) => socket.data.fail(error),
    },
  });
  return fresh;
}

function requestHead(authorization: string, length: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\nAuthorization: ${authorization}\r\nContent-Length: ${length}\r\n\r\n`;
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (request.method === "GET" && pathname === "/ping") return new Response(null, { status: 200 });
    if (request.method !== "POST" || pathname !== "/v1/chat/completions") return new Response("not found", { status: 404 });
    const body = new Uint8Array(await request.arrayBuffer());
    const head = requestHead(request.headers.get("authorization") ?? "", body.byteLength);
    const wire = new Uint8Array(Buffer.byteLength(head) + body.byteLength);
    wire.set(Buffer.from(head, "latin1"), 0);
    wire.set(body, wire.byteLength - body.byteLength);
    const upstreamConnection = await connection();
    return new Promise<Response>((resolve, reject) => {
      let status = 0;
      let contentType = "";
      let chunks: Uint8Array[] = [];
      let streaming: { write(chunk: Uint8Array): unknown; close(): void } | undefined;
      let ended = false;
      upstreamConnection.start(
        {
          onHead(answerStatus, answerType) {
            status = answerStatus;
            contentType = answerType;
            if (!answerType.startsWith("text/event-stream")) return;
            // A stream goes out as it comes: a direct stream written from the socket's chunks.
            resolve(
              new Response(
                new ReadableStream({
                  type: "direct",
                  pull(controller) {
                    for (const chunk of chunks) controller.write(chunk);
                    chunks = [];
                    if (ended) return void controller.close();
                    return new Promise<void>((done) => (streaming = { write: (chunk) => controller.write(chunk), close: () => (controller.close(), done()) }));
                  },
                }),
                { status, headers: { "content-type": answerType } },
              ),
            );
          },
          onBody(chunk) {
            // The socket's buffer is reused: keep a copy.
            if (streaming !== undefined) streaming.write(chunk.slice());
            else chunks.push(chunk.slice());
          },
          onEnd() {
            ended = true;
            if (streaming !== undefined) return streaming.close();
            if (!contentType.startsWith("text/event-stream")) resolve(new Response(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), { status, headers: { "content-type": contentType } }));
          },
          onError: reject,
        },
        wire,
      );
    });
  },
});

console.log(`http://127.0.0.1:${server.port}`);

for await (const _ of Bun.stdin.stream()) {
  // nothing is sent; the loop ends when the parent goes away
}
server.stop(true);
process.exit(0);

export {};
