import { describe, expect, test } from "bun:test";
import { BodyReader, readBodyText } from "../../src/routing/body-reader";

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
    expect(await readBodyText(new Response('{"ok":true}'), 100, () => {})).toBe('{"ok":true}');
  });

  test("a body that does not finish within the idle timeout aborts the upstream and throws upstream_timeout", async () => {
    const source = manualBody();
    source.push('{"partial":');
    const error = await readBodyText(new Response(source.body), 60, source.abort).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "upstream_timeout" });
    expect(source.aborted()).toBe(1);
  });

  test("a body cut by the network is upstream_bad_gateway", async () => {
    const source = manualBody();
    source.push('{"partial":');
    setTimeout(() => source.abort(), 10);
    expect(await readBodyText(new Response(source.body), 1000, () => {}).catch((e: unknown) => e)).toMatchObject({ kind: "upstream_bad_gateway" });
  });
});
