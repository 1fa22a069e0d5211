import { describe, expect, test } from "bun:test";
import { BodyReader, readBodyText, readBodyTextOrBytes } from "../../src/routing/body-reader";
import type { BodyBytes } from "../../src/http/request-body";

const bytes = (text: string) => new TextEncoder().encode(text);

/** A body whose chunks the test pushes by hand; `abort` errors it, as aborting the fetch does. */
function manualBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  let aborted = 0;
  return {
    body,
    push: (text: string) => controller.enqueue(bytes(text)),
    end: () => controller.close(),
    abort: () => {
      aborted++;
      controller.error(new Error("aborted"));
    },
    aborted: () => aborted,
  };
}

describe("BodyReader (streams)", () => {
  test("reads chunks in order, then undefined at the end", async () => {
    const source = manualBody();
    const reader = new BodyReader(source.body, 200, source.abort);
    source.push("one ");
    source.push("two");
    source.end();
    expect(await reader.next()).toBe("one ");
    expect(await reader.next()).toBe("two");
    expect(await reader.next()).toBeUndefined();
    expect(source.aborted()).toBe(0);
  });

  test("a read that waits longer than the idle timeout aborts the upstream and throws upstream_timeout", async () => {
    const source = manualBody();
    const reader = new BodyReader(source.body, 80, source.abort);
    source.push("first");
    expect(await reader.next()).toBe("first");
    const started = performance.now();
    const error = await reader.next().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "upstream_timeout" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(70);
    expect(source.aborted()).toBe(1);
  });

  test("time between reads (a slow client holding the relay back) does not count as upstream idleness", async () => {
    const source = manualBody();
    const reader = new BodyReader(source.body, 60, source.abort);
    source.push("a");
    expect(await reader.next()).toBe("a");
    await Bun.sleep(200); // the consumer is busy for over three idle periods
    source.push("b");
    expect(await reader.next()).toBe("b");
    setTimeout(() => source.end(), 20); // well inside the idle period
    expect(await reader.next()).toBeUndefined();
    expect(source.aborted()).toBe(0);
  });

  test("a connection that fails mid-body is upstream_bad_gateway", async () => {
    const source = manualBody();
    const reader = new BodyReader(source.body, 1000, () => {});
    setTimeout(() => source.abort(), 10);
    expect(await reader.next().catch((e: unknown) => e)).toMatchObject({ kind: "upstream_bad_gateway" });
  });
});

describe("readBodyText (whole bodies)", () => {
  test("returns the body", async () => {
    expect(await readBodyText(new Response('{"ok":true}'), 100, () => {}, 1024)).toBe('{"ok":true}');
  });

  test("a body that does not finish within the idle timeout aborts the upstream and throws upstream_timeout", async () => {
    const source = manualBody();
    source.push('{"partial":');
    const error = await readBodyText(new Response(source.body), 60, source.abort, 1024).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "upstream_timeout" });
    expect(source.aborted()).toBe(1);
  });

  test("a body cut by the network is upstream_bad_gateway", async () => {
    const source = manualBody();
    source.push('{"partial":');
    setTimeout(() => source.abort(), 10);
    expect(await readBodyText(new Response(source.body), 1000, () => {}, 1024).catch((e: unknown) => e)).toMatchObject({ kind: "upstream_bad_gateway" });
  });

  test("a body declared past the limit is refused before it is read, and the upstream aborted", async () => {
    const source = manualBody();
    const response = new Response(source.body, { headers: { "content-length": "2048" } });
    expect(await readBodyText(response, 1000, source.abort, 1024).catch((e: unknown) => e)).toMatchObject({ kind: "upstream_invalid_response" });
    expect(source.aborted()).toBe(1);
  });

  test("a body without a length is read within the limit and cut off past it, however long it goes on", async () => {
    const source = manualBody();
    let sent = 0;
    const feeder = setInterval(() => {
      if (source.aborted() > 0) return clearInterval(feeder);
      source.push("x".repeat(100));
      sent += 100;
    }, 1);
    const error = await readBodyText(new Response(source.body), 5_000, source.abort, 1024).catch((e: unknown) => e);
    clearInterval(feeder);
    expect(error).toMatchObject({ kind: "upstream_invalid_response" });
    expect(source.aborted()).toBe(1);
    expect(sent).toBeLessThan(2_000);
    // Within the limit, read whole, a character split between two chunks included.
    const text = "grüße ✓ ".repeat(50);
    const encoded = bytes(text);
    const split = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoded.subarray(0, 3));
        controller.enqueue(encoded.subarray(3));
        controller.close();
      },
    });
    expect(await readBodyText(new Response(split), 1000, () => {}, 1024)).toBe(text);
  });

  test("a compressed body's length is not what it inflates to: read in chunks within the limit", async () => {
    const source = manualBody();
    source.push("y".repeat(2048));
    source.end();
    const response = new Response(source.body, { headers: { "content-length": "20", "content-encoding": "gzip" } });
    expect(await readBodyText(response, 1000, source.abort, 1024).catch((e: unknown) => e)).toMatchObject({ kind: "upstream_invalid_response" });
  });
});

describe("readBodyTextOrBytes (a whole answer a worker may translate)", () => {
  const text = "grüße ✓ ".repeat(200);
  const encoded = bytes(text);
  const joined = (body: string | BodyBytes) => (typeof body === "string" ? body : new TextDecoder().decode(Buffer.concat(body.chunks, body.byteLength)));

  test("a body of `bytesAbove` bytes or fewer is text; a longer one its bytes, declared or not", async () => {
    expect(await readBodyTextOrBytes(new Response(encoded), 1000, () => {}, 1 << 20, encoded.byteLength)).toBe(text);
    const declared = await readBodyTextOrBytes(new Response(encoded), 1000, () => {}, 1 << 20, encoded.byteLength - 1);
    expect(typeof declared).not.toBe("string");
    expect((declared as BodyBytes).byteLength).toBe(encoded.byteLength);
    expect(joined(declared)).toBe(text);
    // Without a length: read in chunks (split inside a character), then text only if it turned out small.
    const split = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (let at = 0; at < encoded.byteLength; at += 77) controller.enqueue(encoded.subarray(at, at + 77));
            controller.close();
          },
        }),
      );
    const chunked = await readBodyTextOrBytes(split(), 1000, () => {}, 1 << 20, 100);
    expect((chunked as BodyBytes).chunks.length).toBeGreaterThan(1);
    expect(joined(chunked)).toBe(text);
    expect(await readBodyTextOrBytes(split(), 1000, () => {}, 1 << 20, 1 << 20)).toBe(text);
  });

  test("the limit holds for bytes as for text: declared past it refused, chunked cut off", async () => {
    const aborts: string[] = [];
    expect(await readBodyTextOrBytes(new Response(encoded), 1000, () => aborts.push("declared"), 100, 10).catch((e: unknown) => e)).toMatchObject({ kind: "upstream_invalid_response" });
    const source = manualBody();
    source.push("z".repeat(300));
    source.end();
    expect(await readBodyTextOrBytes(new Response(source.body), 1000, () => aborts.push("chunked"), 100, 10).catch((e: unknown) => e)).toMatchObject({ kind: "upstream_invalid_response" });
    expect(aborts).toEqual(["declared", "chunked"]);
  });
});
