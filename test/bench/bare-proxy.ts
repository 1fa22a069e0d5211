/**
 * Child process: the floor any gateway is compared against. Forwards POST
 * /v1/chat/completions to the upstream with the caller's Authorization, and pipes the
 * upstream's status, content type and body back: no auth, no parsing, no translation.
 * Prints its base URL and runs until its stdin closes.
 *
 *   bun test/bench/bare-proxy.ts <upstream base URL, e.g. http://127.0.0.1:1234/v1>
 */
const upstream = process.argv[2];
if (upstream === undefined) throw new Error("usage: bun test/bench/bare-proxy.ts <upstream base URL>");
const target = `${upstream}/chat/completions`;

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (request.method === "GET" && pathname === "/ping") return new Response(null, { status: 200 });
    if (request.method !== "POST" || pathname !== "/v1/chat/completions") return new Response("not found", { status: 404 });
    const response = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: request.headers.get("authorization") ?? "" },
      body: await request.arrayBuffer(),
    });
    return new Response(response.body, {
      status: response.status,
      headers: { "content-type": response.headers.get("content-type") ?? "application/json" },
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
