import { afterAll, describe, expect, test } from "bun:test";
import { LARGE_STRING_CHARS, findLargeStrings, restoreStrings, setAsideStrings } from "../../src/translation/large-strings";
import { handleTranslationMessage } from "../../src/translation/translation-handler";
import { InlineTranslator, PooledTranslator, type StringPool } from "../../src/translation/translator";
import { WorkerPool } from "../../src/workers/worker-pool";
import type { IrRequest } from "../../src/ir";
import type { Beside, WorkerAnswer } from "../../src/workers/wire-format";

const LONG = "a".repeat(LARGE_STRING_CHARS);
const LONGER = "é✓".repeat(LARGE_STRING_CHARS);

describe("long strings set aside and put back", () => {
  test("found wherever they are, shorter ones left in place", () => {
    const value = { a: LONG, b: "short", c: [1, { d: LONGER, e: LONG.slice(1) }], f: null, g: { h: [[LONG]] } };
    expect(findLargeStrings(value)).toEqual([["a"], ["c", 1, "d"], ["g", "h", 0, 0]]);
    expect(findLargeStrings("short")).toEqual([]);
    expect(findLargeStrings(LONG)).toEqual([[]]);
  });

  test("set aside without changing the original, and put back into an equal value", () => {
    const shared = { untouched: [1, 2, 3] };
    const value = { a: LONG, c: [shared, { d: LONGER, keep: "x" }], other: shared };
    const before = JSON.stringify(value);
    const aside = setAsideStrings(value, findLargeStrings(value));
    expect(JSON.stringify(value)).toBe(before);
    expect(aside.paths).toEqual([["a"], ["c", 1, "d"]]);
    expect(aside.strings).toEqual([LONG, LONGER]);
    const skeleton = aside.skeleton as typeof value;
    // Only the containers on the way are copied: the rest is shared, not cloned.
    expect(skeleton.other).toBe(shared);
    expect(skeleton.c[0]).toBe(shared);
    expect(JSON.stringify(skeleton).length).toBeLessThan(200);
    const parsed = JSON.parse(JSON.stringify(skeleton));
    restoreStrings(parsed, aside.paths, aside.strings);
    expect(parsed).toEqual(value);
  });

  test("a path that no longer leads to a long string is skipped, and what is there now stays inline", () => {
    const value = { messages: [{ text: "now short" }, { text: LONG }] };
    const aside = setAsideStrings(value, [["messages", 0, "text"], ["messages", 1, "text"], ["gone", 3], ["messages", 5, "text"]]);
    expect(aside.paths).toEqual([["messages", 1, "text"]]);
    expect(JSON.stringify(aside.skeleton)).toBe('{"messages":[{"text":"now short"},{"text":""}]}');
    // Nothing to set aside: the value itself.
    expect(setAsideStrings(value, []).skeleton).toBe(value);
  });

  test("a client's __proto__ key is an ordinary key: nothing reaches a prototype", () => {
    const body = `{"metadata":{"__proto__":{"polluted":"${LONG}"}},"list":[]}`;
    const value = JSON.parse(body);
    const paths = findLargeStrings(value);
    expect(paths).toEqual([["metadata", "__proto__", "polluted"]]);
    const aside = setAsideStrings(value, paths);
    const parsed = JSON.parse(JSON.stringify(aside.skeleton));
    restoreStrings(parsed, aside.paths, aside.strings);
    expect(JSON.stringify(parsed)).toBe(body);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(parsed.metadata)).toBe(Object.prototype);
  });

  test("putting back refuses paths that lead to no string set aside", () => {
    expect(() => restoreStrings({ a: {} }, [["a", "b", "c"]], ["x"])).toThrow();
    expect(() => restoreStrings({ a: "" }, [["a"]], [])).toThrow();
  });
});

/** A pool that runs the worker's handler on this thread, and keeps what crossed. */
class RecordingPool implements StringPool {
  readonly crossed: { payload: string; texts: readonly string[] | undefined; answer: string; answerTexts: readonly string[] | undefined }[] = [];
  async exchange(payload: string, beside: Beside | undefined) {
    const answer = handleTranslationMessage(payload, beside);
    const reply: WorkerAnswer = typeof answer === "string" ? { body: answer } : answer;
    this.crossed.push({ payload, texts: beside?.texts, answer: reply.body, answerTexts: reply.texts });
    return reply;
  }
  /** Runs each call to its end at once: never busy. */
  pinnedLoad() {
    return 0;
  }
  release() {}
  async close() {}
}

const MODEL = "mock-openai/gpt-4o-mini";
const longChat = (model = MODEL) =>
  JSON.stringify({
    model,
    max_tokens: 16,
    messages: [
      { role: "system", content: "be brief" },
      { role: "user", content: [{ type: "text", text: LONGER }, { type: "image_url", image_url: { url: `data:image/png;base64,${"iVBOR".repeat(LARGE_STRING_CHARS)}` } }] },
      { role: "user", content: "short one" },
    ],
  });

describe("a decoded request's long strings cross the worker boundary beside its JSON, both ways", () => {
  test("decode and encode through the pool give what inline gives, and neither JSON carries a long string", async () => {
    const pool = new RecordingPool();
    const pooled = new PooledTranslator(pool);
    const inline = new InlineTranslator();
    const body = longChat();
    for (const protocol of ["anthropic-messages", "openai-chat", "openai-responses", "google-generate-content"] as const) {
      pool.crossed.length = 0;
      const decoded = await pooled.decodeRequest("openai-chat", body);
      expect(decoded).toEqual(await inline.decodeRequest("openai-chat", body));
      const encoded = await pooled.encodeRequest(protocol, decoded.request, "upstream-model", true);
      const expected = await inline.encodeRequest(protocol, decoded.request, "upstream-model", true);
      // Not ASCII, so its UTF-8 bytes come back as a Blob, which fetch sends as they are.
      expect(encoded.body).toBeInstanceOf(Blob);
      expect(await (encoded.body as Blob).text()).toBe(expected.body as string);
      expect(encoded.warnings).toEqual(expected.warnings);
      // Another candidate's encode of the same request: the worker gave its kept messages to the first.
      const again = await pooled.encodeRequest(protocol, decoded.request, "upstream-model", true);
      expect(await (again.body as Blob).text()).toBe(expected.body as string);
      const [decodeCall, encodeCall, againCall] = pool.crossed;
      // The decode: the body beside the call, the request's two long strings beside the answer.
      expect(decodeCall!.texts).toEqual([body]);
      expect(decodeCall!.answerTexts).toHaveLength(2);
      expect(decodeCall!.answer.length).toBeLessThan(2_000);
      // The first encode: the messages are the ones the worker kept, nothing of them crosses.
      expect(encodeCall!.texts).toBeUndefined();
      expect(encodeCall!.payload.length).toBeLessThan(2_000);
      expect(encodeCall!.answer.length).toBeLessThan(2_000);
      // The second: the two long strings beside the call, nothing long in either JSON.
      expect(againCall!.texts).toHaveLength(2);
      expect(againCall!.payload.length).toBeLessThan(2_000);
    }
  });

  test("an ASCII body comes back as text, and a client body as bytes decodes as its text does", async () => {
    const pool = new RecordingPool();
    const pooled = new PooledTranslator(pool);
    const inline = new InlineTranslator();
    const ascii = JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: LONG }] });
    const decoded = await pooled.decodeRequest("openai-chat", ascii);
    const encoded = await pooled.encodeRequest("anthropic-messages", decoded.request, "up", false);
    expect(encoded).toEqual(await inline.encodeRequest("anthropic-messages", decoded.request, "up", false));
    // The same non-ASCII body as bytes, split inside a two-byte character, with a byte that is not UTF-8.
    const bytes = Buffer.from(longChat());
    const split = bytes.indexOf(Buffer.from("é")) + 1;
    const chunks = [new Uint8Array(bytes.subarray(0, split)), new Uint8Array(bytes.subarray(split))];
    const fromBytes = await pooled.decodeRequest("openai-chat", { chunks, byteLength: bytes.byteLength });
    expect(fromBytes).toEqual(await inline.decodeRequest("openai-chat", longChat()));
    expect(pool.crossed.at(-1)!.texts).toBeUndefined();
    const invalid = Buffer.from(JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: `${LONG}#` }] }));
    invalid[invalid.indexOf("#")] = 0xff;
    const replaced = await inline.decodeRequest("openai-chat", { chunks: [new Uint8Array(invalid)], byteLength: invalid.byteLength });
    expect(JSON.stringify(replaced.request.messages)).toContain(`${LONG}\ufffd`);
  });

  test("a request changed after its decode is encoded as it is now", async () => {
    const pool = new RecordingPool();
    const pooled = new PooledTranslator(pool);
    const decoded = await pooled.decodeRequest("openai-chat", longChat());
    // A routing preset's defaults make a new request that shares the messages.
    const withDefaults: IrRequest = { ...decoded.request, system: "from the preset", params: { ...decoded.request.params, temperature: 0.25 } };
    const inline = new InlineTranslator();
    const bodyText = async (encoded: { body: string | Blob }) => new Response(encoded.body).text();
    expect(await bodyText(await pooled.encodeRequest("anthropic-messages", withDefaults, "up", false))).toBe(await bodyText(await inline.encodeRequest("anthropic-messages", withDefaults, "up", false)));
    // Its messages are still the decoded ones: the worker's kept copy is encoded, with the new top-level fields.
    expect(pool.crossed.at(-1)!.texts).toBeUndefined();
    expect(pool.crossed.at(-1)!.payload).toContain("from the preset");
    // A long string replaced, and one made short, after the decode: the paths found then are not trusted.
    const message = decoded.request.messages[1]!;
    const changed: IrRequest = { ...decoded.request, messages: [decoded.request.messages[0]!, { ...message, content: [{ type: "text", text: "now short" }] }] };
    expect(await bodyText(await pooled.encodeRequest("openai-chat", changed, "up", false))).toBe(await bodyText(await inline.encodeRequest("openai-chat", changed, "up", false)));
  });

  const workerPool = new WorkerPool({ workerUrl: new URL("../../workers/translate.worker.ts", import.meta.url), size: 1, name: "large-strings-test" });
  afterAll(() => workerPool.close());

  test("through a real worker thread: the same answers as inline", async () => {
    const pooled = new PooledTranslator(workerPool);
    const inline = new InlineTranslator();
    const body = longChat();
    const decoded = await pooled.decodeRequest("openai-chat", body);
    expect(decoded).toEqual(await inline.decodeRequest("openai-chat", body));
    const encoded = await pooled.encodeRequest("google-generate-content", decoded.request, "gemini-x", false);
    const expected = await inline.encodeRequest("google-generate-content", decoded.request, "gemini-x", false);
    expect(await new Response(encoded.body).text()).toBe(expected.body as string);
    // A client body as bytes, moved to the worker.
    const bytes = new Uint8Array(Buffer.from(body));
    expect(await pooled.decodeRequest("openai-chat", { chunks: [bytes], byteLength: bytes.byteLength })).toEqual(decoded);
    expect(bytes.byteLength).toBe(0);
  });
});
