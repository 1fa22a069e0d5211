import { afterAll, describe, expect, test } from "bun:test";
import { handleTranslationMessage } from "../../src/translation/translation-handler";
import { InlineTranslator, PooledTranslator, type StringPool } from "../../src/translation/translator";
import { WorkerPool } from "../../src/workers/worker-pool";
import type { Beside, WorkerAnswer } from "../../src/workers/wire-format";

/**
 * The worker that decoded a request keeps its messages for the request's encode, so the
 * request thread neither writes them as JSON again nor sends them (translator.ts). A body of
 * many small parts has no long string to set aside, and was written and parsed whole.
 */

/** A pool that runs the worker's handler on this thread, and keeps each call's operation, size and affinity key. */
class RecordingPool implements StringPool {
  readonly calls: { op: string; bytes: number; key: string | undefined }[] = [];
  readonly released: string[] = [];
  async exchange(payload: string, beside: Beside | undefined, affinityKey?: string) {
    this.calls.push({ op: (JSON.parse(payload) as { op: string }).op, bytes: payload.length, key: affinityKey });
    const answer = handleTranslationMessage(payload, beside);
    return (typeof answer === "string" ? { body: answer } : answer) satisfies WorkerAnswer;
  }
  /** Calls in flight on the pinned worker, as the test sets it (this pool runs each call to its end at once). */
  load = 0;
  pinnedLoad() {
    return this.load;
  }
  release(key: string) {
    this.released.push(key);
  }
  async close() {}
}

const manyParts = (count: number) =>
  JSON.stringify({ model: "m", max_tokens: 16, messages: Array.from({ length: count }, (_, index) => ({ role: "user", content: [{ type: "text", text: `part ${index}` }] })) });

describe("decoded messages kept in the worker for the encode", () => {
  test("the encode names them instead of sending them, on the worker that decoded them, and gives what inline gives", async () => {
    const pool = new RecordingPool();
    const pooled = new PooledTranslator(pool);
    const body = manyParts(5_000);
    const decoded = await pooled.decodeRequest("openai-chat", body);
    const encoded = await pooled.encodeRequest("anthropic-messages", decoded.request, "up", false);
    expect(encoded).toEqual(await new InlineTranslator().encodeRequest("anthropic-messages", decoded.request, "up", false));
    const [decodeCall, encodeCall] = pool.calls;
    expect(decodeCall!.op).toBe("decode_request");
    expect(decodeCall!.key).toBeDefined();
    expect(encodeCall).toMatchObject({ op: "encode_request", key: decodeCall!.key });
    // 5,000 messages were not written into the encode's JSON.
    expect(encodeCall!.bytes).toBeLessThan(500);
    expect(pool.released).toEqual([decodeCall!.key!]);
    // The next encode (another candidate) sends them again: the first took the kept ones.
    await pooled.encodeRequest("openai-chat", decoded.request, "up", false);
    expect(pool.calls.at(-1)!.bytes).toBeGreaterThan(body.length / 2);
    expect(pool.calls.at(-1)!.key).toBeUndefined();
  });

  test("when the worker that kept them is busy, the messages go to another instead of waiting behind its call", async () => {
    const pool = new RecordingPool();
    const pooled = new PooledTranslator(pool);
    const decoded = await pooled.decodeRequest("openai-chat", manyParts(500));
    // A large body's translation took that worker meanwhile.
    pool.load = 1;
    const encoded = await pooled.encodeRequest("anthropic-messages", decoded.request, "up", false);
    expect(encoded).toEqual(await new InlineTranslator().encodeRequest("anthropic-messages", decoded.request, "up", false));
    const key = pool.calls[0]!.key!;
    const encode = pool.calls.find((call) => call.op === "encode_request")!;
    expect(encode.key).toBeUndefined();
    // What the worker kept is forgotten, and the key released.
    expect(pool.calls.find((call) => call.op === "forget")?.key).toBe(key);
    for (let i = 0; i < 10 && pool.released.length === 0; i++) await Promise.resolve();
    expect(pool.released).toEqual([key]);
  });

  test("messages the worker no longer keeps are sent after all: the same encode", async () => {
    const pool = new RecordingPool();
    const pooled = new PooledTranslator(pool);
    const first = await pooled.decodeRequest("openai-chat", manyParts(3));
    // More requests decoded and never encoded than the worker keeps: the oldest are dropped.
    const others = [];
    for (let index = 0; index < 70; index++) others.push(await pooled.decodeRequest("openai-chat", manyParts(2)));
    const encoded = await pooled.encodeRequest("openai-chat", first.request, "up", false);
    expect(encoded).toEqual(await new InlineTranslator().encodeRequest("openai-chat", first.request, "up", false));
    const encodes = pool.calls.filter((call) => call.op === "encode_request");
    expect(encodes.map((call) => call.key === undefined)).toEqual([false, true]);
    expect(others).toHaveLength(70);
  });

  test("a request that ends without an encode has its kept messages forgotten once it is collected", async () => {
    const pool = new RecordingPool();
    const pooled = new PooledTranslator(pool);
    await (async () => {
      await pooled.decodeRequest("openai-chat", manyParts(10));
    })();
    for (let waited = 0; waited < 5_000 && !pool.calls.some((call) => call.op === "forget"); waited += 20) {
      Bun.gc(true);
      await Bun.sleep(20);
    }
    const forget = pool.calls.find((call) => call.op === "forget");
    expect(forget?.key).toBe(pool.calls[0]!.key);
    for (let waited = 0; waited < 1_000 && pool.released.length === 0; waited += 10) await Bun.sleep(10);
    expect(pool.released).toEqual([forget!.key!]);
  });

  const workerPool = new WorkerPool({ workerUrl: new URL("../../workers/translate.worker.ts", import.meta.url), size: 2, name: "kept-messages-test" });
  afterAll(() => workerPool.close());

  test("through real worker threads, many requests at once: every encode as inline, and no key left pinned", async () => {
    const pooled = new PooledTranslator(workerPool);
    const inline = new InlineTranslator();
    await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        const decoded = await pooled.decodeRequest("openai-chat", manyParts(50 + index));
        const encoded = await pooled.encodeRequest("google-generate-content", decoded.request, "g", index % 2 === 0);
        expect(encoded).toEqual(await inline.encodeRequest("google-generate-content", decoded.request, "g", index % 2 === 0));
      }),
    );
    // A busy worker's kept messages are forgotten by a call of their own, released when it returns.
    for (let waited = 0; waited < 2_000 && workerPool.stats().pinned > 0; waited += 10) await Bun.sleep(10);
    expect(workerPool.stats().pinned).toBe(0);
  });
});
