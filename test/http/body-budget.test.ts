import { describe, expect, test } from "bun:test";
import { BodyBudget, enrolRequest, finishRequest, LARGE_BODY_BYTES, nameBodyHolder } from "../../src/http/body-budget";
import { BodyTooLargeError, readBodyTextOrBytesWithin, readBodyWithin, type BodyBytes } from "../../src/http/request-body";
import { bodyWeight } from "../../src/http/body-weight";

/** A body read as bytes whatever its size. */
const readBodyBytesWithin = (request: Request, limit: number) => readBodyTextOrBytesWithin(request, limit, 0) as Promise<BodyBytes>;

const MiB = 1024 * 1024;

/** Whether `promise` has settled, once every microtask queued so far has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return done;
}

function postBody(text: string): Request {
  return new Request("http://gateway.test/v1/chat/completions", { method: "POST", headers: { "content-length": String(text.length) }, body: text });
}

function postWithLength(bytes: number): Request {
  return new Request("http://gateway.test/v1/chat/completions", {
    method: "POST",
    headers: { "content-length": String(bytes) },
    body: "x".repeat(bytes),
  });
}

/** A request without a Content-Length whose body arrives as a stream of `chunks` pieces of `chunkBytes`. */
function postChunked(chunks: number, chunkBytes: number): Request {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ === chunks) return controller.close();
      controller.enqueue(new Uint8Array(chunkBytes).fill(120));
    },
  });
  return new Request("http://gateway.test/v1/chat/completions", { method: "POST", body });
}

describe("BodyBudget", () => {
  test("bytes that fit are granted at once; the rest wait, in arrival order, until enough is released", async () => {
    const budget = new BodyBudget(10 * MiB, () => {});
    expect(await settled(budget.acquire(6 * MiB))).toBe(true);
    const second = budget.acquire(6 * MiB);
    const third = budget.acquire(1 * MiB);
    expect(await settled(second)).toBe(false);
    // The third would fit, but it arrived after the second: no overtaking.
    expect(await settled(third)).toBe(false);
    expect(budget.stats()).toEqual({ heldBytes: 6 * MiB, waiting: 2 });
    budget.release(6 * MiB);
    expect(await settled(second)).toBe(true);
    expect(await settled(third)).toBe(true);
    expect(budget.stats()).toEqual({ heldBytes: 7 * MiB, waiting: 0 });
  });

  test("turns go to the holder granted room longest ago: one account's queue of bodies does not hold back another's", async () => {
    const budget = new BodyBudget(3 * MiB, () => {});
    const granted: string[] = [];
    const take = (holder: string, name: string, bytes = 2 * MiB) => budget.acquire(bytes, holder).then(() => granted.push(name));
    await take("flooder", "f1");
    const queued = [take("flooder", "f2"), take("flooder", "f3"), take("flooder", "f4"), take("victim", "v1")];
    expect(budget.stats().waiting).toBe(4);
    for (let released = 0; released < 4; released++) {
      budget.release(2 * MiB);
      for (let i = 0; i < 10; i++) await Promise.resolve();
    }
    await Promise.all(queued);
    // The victim's one body comes right after the body the flooder had in, not after its whole queue.
    expect(granted).toEqual(["f1", "v1", "f2", "f3", "f4"]);
  });

  test("nothing overtakes the turn: a body that does not fit yet holds back a smaller one of another holder", async () => {
    const budget = new BodyBudget(4 * MiB, () => {});
    await budget.acquire(3 * MiB, "a");
    const whole = budget.acquire(4 * MiB, "b");
    const small = budget.acquire(1 * MiB, "c");
    expect(await settled(whole)).toBe(false);
    // It would fit beside the 3 MiB held, but b waits longer and has never had room: its turn.
    expect(await settled(small)).toBe(false);
    budget.release(3 * MiB);
    expect(await settled(whole)).toBe(true);
    expect(await settled(small)).toBe(false);
    budget.release(4 * MiB);
    expect(await settled(small)).toBe(true);
  });

  test("a body larger than the whole budget is admitted alone, so every body is served eventually", async () => {
    const budget = new BodyBudget(4 * MiB, () => {});
    expect(await settled(budget.acquire(2 * MiB))).toBe(true);
    const huge = budget.acquire(32 * MiB);
    expect(await settled(huge)).toBe(false);
    budget.release(2 * MiB);
    expect(await settled(huge)).toBe(true);
  });

  test("a budget of 0 never makes anything wait", async () => {
    const budget = new BodyBudget(0, () => {});
    expect(await settled(budget.acquire(100 * MiB))).toBe(true);
    expect(await settled(budget.acquire(100 * MiB))).toBe(true);
  });

  test("a release collects the heap's garbage: after bodies under a quarter of the budget at most once in a short interval", () => {
    let collections = 0;
    const budget = new BodyBudget(10 * MiB, () => collections++);
    void budget.acquire(2 * MiB);
    void budget.acquire(2 * MiB);
    budget.release(2 * MiB);
    budget.release(2 * MiB);
    expect(collections).toBe(1);
  });

  test("after a body of a quarter of the budget or more, every release collects", () => {
    let collections = 0;
    const budget = new BodyBudget(8 * MiB, () => collections++);
    void budget.acquire(2 * MiB);
    void budget.acquire(4 * MiB);
    budget.release(2 * MiB);
    budget.release(4 * MiB);
    expect(collections).toBe(2);
  });
});

describe("a request's large body waits for room in the budget before it is read", () => {
  test("a second large body waits until the first request has its answer, then is read", async () => {
    const budget = new BodyBudget(3 * MiB, () => {});
    const first = postWithLength(2 * MiB);
    const second = postWithLength(2 * MiB);
    enrolRequest(first, budget);
    enrolRequest(second, budget);
    expect((await readBodyWithin(first, 32 * MiB)).length).toBe(2 * MiB);
    const secondBody = readBodyWithin(second, 32 * MiB);
    expect(await settled(secondBody)).toBe(false);
    expect(budget.stats().waiting).toBe(1);
    finishRequest(first);
    expect((await secondBody).length).toBe(2 * MiB);
    finishRequest(second);
    expect(budget.stats()).toEqual({ heldBytes: 0, waiting: 0 });
  });

  test("small bodies never wait, even with the budget full", async () => {
    const budget = new BodyBudget(2 * MiB, () => {});
    const large = postWithLength(2 * MiB);
    enrolRequest(large, budget);
    await readBodyWithin(large, 32 * MiB);
    const small = postWithLength(LARGE_BODY_BYTES);
    enrolRequest(small, budget);
    expect(await settled(readBodyWithin(small, 32 * MiB))).toBe(true);
  });

  test("a chunked body holds room for the route's limit once it passes the large-body size", async () => {
    const budget = new BodyBudget(8 * MiB, () => {});
    const other = postWithLength(2 * MiB);
    enrolRequest(other, budget);
    await readBodyWithin(other, 8 * MiB);
    const chunked = postChunked(3, MiB);
    enrolRequest(chunked, budget);
    const body = readBodyWithin(chunked, 8 * MiB);
    // 8 MiB (its limit) do not fit next to the 2 MiB held: it waits for them.
    for (let i = 0; i < 5 && budget.stats().waiting === 0; i++) await Bun.sleep(0);
    expect(budget.stats().waiting).toBe(1);
    finishRequest(other);
    expect((await body).length).toBe(3 * MiB);
    // Read, it holds its weight: 3 MiB of text.
    expect(budget.stats().heldBytes).toBe(3 * MiB);
    finishRequest(chunked);
    expect(budget.stats().heldBytes).toBe(0);
  });

  test("a request that ends while it waits gives its room straight back when its turn comes", async () => {
    const budget = new BodyBudget(3 * MiB, () => {});
    const first = postWithLength(2 * MiB);
    const gone = postWithLength(2 * MiB);
    const third = postWithLength(2 * MiB);
    for (const request of [first, gone, third]) enrolRequest(request, budget);
    await readBodyWithin(first, 32 * MiB);
    const goneBody = readBodyWithin(gone, 32 * MiB);
    const thirdBody = readBodyWithin(third, 32 * MiB);
    finishRequest(gone);
    finishRequest(first);
    await goneBody;
    expect((await thirdBody).length).toBe(2 * MiB);
    expect(budget.stats()).toEqual({ heldBytes: 2 * MiB, waiting: 0 });
  });

  test("a request under no budget reads as before", async () => {
    expect((await readBodyWithin(postWithLength(2 * MiB), 32 * MiB)).length).toBe(2 * MiB);
  });

  test("read as bytes, a declared large body waits for room like one read as text, and comes in the chunks it was sent in", async () => {
    const budget = new BodyBudget(3 * MiB, () => {});
    const first = postWithLength(2 * MiB);
    const second = postWithLength(2 * MiB);
    enrolRequest(first, budget);
    enrolRequest(second, budget);
    const firstBytes = await readBodyBytesWithin(first, 32 * MiB);
    expect(firstBytes.byteLength).toBe(2 * MiB);
    expect(firstBytes.chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0)).toBe(2 * MiB);
    const secondBytes = readBodyBytesWithin(second, 32 * MiB);
    expect(await settled(secondBytes)).toBe(false);
    finishRequest(first);
    expect((await secondBytes).byteLength).toBe(2 * MiB);
    finishRequest(second);
    expect(budget.stats()).toEqual({ heldBytes: 0, waiting: 0 });
  });

  test("read as bytes, a chunked body keeps its chunks, holds room once large (then only its weight), and is refused past its limit", async () => {
    const budget = new BodyBudget(8 * MiB, () => {});
    const chunked = postChunked(3, MiB);
    enrolRequest(chunked, budget);
    const bytes = await readBodyBytesWithin(chunked, 8 * MiB);
    expect(bytes.chunks.map((chunk) => chunk.byteLength)).toEqual([MiB, MiB, MiB]);
    // It held the limit while it was read, for the most it might become; read, 3 MiB of text weigh 3 MiB.
    expect(budget.stats().heldBytes).toBe(3 * MiB);
    finishRequest(chunked);
    const tooLarge = postChunked(3, MiB);
    enrolRequest(tooLarge, budget);
    await expect(readBodyBytesWithin(tooLarge, 2 * MiB)).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(budget.stats().heldBytes).toBe(0);
    await expect(readBodyBytesWithin(postWithLength(3 * MiB), 2 * MiB)).rejects.toBeInstanceOf(BodyTooLargeError);
  });

  test("a request's body waits in the turn of the holder it is named for", async () => {
    const budget = new BodyBudget(3 * MiB, () => {});
    const requests = { a1: postWithLength(2 * MiB), a2: postWithLength(2 * MiB), a3: postWithLength(2 * MiB), b1: postWithLength(2 * MiB) };
    const order: string[] = [];
    for (const [name, request] of Object.entries(requests)) {
      enrolRequest(request, budget);
      nameBodyHolder(request, name.slice(0, 1));
    }
    await readBodyWithin(requests.a1, 8 * MiB);
    order.push("a1");
    const reads = (["a2", "a3", "b1"] as const).map((name) => readBodyWithin(requests[name], 8 * MiB).then(() => order.push(name)));
    for (let i = 0; i < 5 && budget.stats().waiting < 3; i++) await Bun.sleep(0);
    for (const name of ["a1", "b1", "a2"] as const) {
      for (let i = 0; i < 20 && !order.includes(name); i++) await Bun.sleep(0);
      finishRequest(requests[name]);
    }
    await Promise.all(reads);
    finishRequest(requests.a3);
    expect(order).toEqual(["a1", "b1", "a2", "a3"]);
    expect(budget.stats()).toEqual({ heldBytes: 0, waiting: 0 });
  });

  test("a body of many small parts holds what its handling takes, not its length: the next one waits until it is answered", async () => {
    const budget = new BodyBudget(12 * MiB, () => {});
    const message = '{"role":"user","content":[{"type":"text","text":"hi"}]},';
    const manyParts = () => postBody(`{"messages":[${message.repeat((2 * MiB) / message.length)}{}]}`);
    const first = manyParts();
    const second = manyParts();
    enrolRequest(first, budget);
    enrolRequest(second, budget);
    // 2 MiB each, which would both fit; each weighs more than the whole budget (its 112,000
    // containers ~14 MiB more), so goes alone.
    await readBodyBytesWithin(first, 32 * MiB);
    expect(budget.stats().heldBytes).toBeGreaterThan(12 * MiB);
    const secondRead = readBodyBytesWithin(second, 32 * MiB);
    expect(await settled(secondRead)).toBe(false);
    finishRequest(first);
    await secondRead;
    finishRequest(second);
    expect(budget.stats()).toEqual({ heldBytes: 0, waiting: 0 });
  });

  test("two bodies that both grow once read do not wait for each other: each is served in turn", async () => {
    const budget = new BodyBudget(8 * MiB, () => {});
    const dense = () => postBody(`[${"[],".repeat(MiB)}[]]`);
    const requests = [dense(), dense()];
    for (const request of requests) enrolRequest(request, budget);
    // Both hold their 3 MiB before their reads; each then wants more than the budget.
    const reads = requests.map((request) => readBodyBytesWithin(request, 32 * MiB));
    await reads[0];
    expect(await settled(reads[1]!)).toBe(false);
    finishRequest(requests[0]!);
    await reads[1];
    finishRequest(requests[1]!);
    expect(budget.stats()).toEqual({ heldBytes: 0, waiting: 0 });
  });

  test("a body that weighs less than it held gives the rest back at once, to a body waiting for it", async () => {
    const budget = new BodyBudget(6 * MiB, () => {});
    let sender!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (controller) => void (sender = controller) });
    const chunked = new Request("http://gateway.test/v1/chat/completions", { method: "POST", body });
    const waiting = postWithLength(3 * MiB);
    enrolRequest(chunked, budget);
    enrolRequest(waiting, budget);
    const chunkedRead = readBodyBytesWithin(chunked, 6 * MiB);
    sender.enqueue(new Uint8Array(MiB).fill(120));
    sender.enqueue(new Uint8Array(MiB).fill(120));
    for (let i = 0; i < 50 && budget.stats().heldBytes === 0; i++) await Bun.sleep(0);
    // Past 1 MiB and not yet ended, the chunked body holds its whole limit, so the declared one waits…
    expect(budget.stats().heldBytes).toBe(6 * MiB);
    const waitingRead = readBodyWithin(waiting, 6 * MiB);
    expect(await settled(waitingRead)).toBe(false);
    sender.close();
    await chunkedRead;
    // …until it is read and weighs its 2 MiB.
    expect((await waitingRead).length).toBe(3 * MiB);
    expect(budget.stats().heldBytes).toBe(5 * MiB);
    finishRequest(chunked);
    finishRequest(waiting);
    expect(budget.stats()).toEqual({ heldBytes: 0, waiting: 0 });
  });
});

describe("bodyWeight", () => {
  test("text weighs its length; every object and array adds the same weight", () => {
    expect(bodyWeight('{"a":"' + "x".repeat(1000) + '"}')).toBe(1008 + 128);
    expect(bodyWeight("[[],{},[{}]]")).toBe(12 + 5 * 128);
    // In chunks, a window across their boundaries counted the same.
    const text = '{"messages":[{"a":[1]},{"b":{}}]}';
    const bytes = new TextEncoder().encode(text);
    expect(bodyWeight({ chunks: [bytes.subarray(0, 5), bytes.subarray(5, 6), bytes.subarray(6)], byteLength: bytes.byteLength })).toBe(bodyWeight(text));
  });

  test("a large body's containers are estimated from samples within a quarter of their count, whatever the spread", () => {
    const exact = (text: string) => text.length + (text.match(/[[{]/g)?.length ?? 0) * 128;
    const message = '{"role":"user","content":[{"type":"text","text":"hi"}]},';
    const dense = `[${message.repeat(80_000)}{}]`;
    // Containers in half of the body only, and text in the other half.
    const halves = `[${message.repeat(40_000)}"${"x".repeat(40_000 * message.length)}"]`;
    for (const text of [dense, halves]) {
      for (let round = 0; round < 20; round++) {
        const weight = bodyWeight(round % 2 === 0 ? text : { chunks: [new TextEncoder().encode(text)], byteLength: text.length });
        expect(Math.abs(weight - exact(text)) / exact(text)).toBeLessThan(0.25);
      }
    }
    // A long text without containers weighs its length.
    expect(bodyWeight("x".repeat(4 * MiB))).toBe(4 * MiB);
  });
});
