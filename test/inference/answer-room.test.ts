import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { normaliseRow } from "../metering/metering-support";
import { metricValue } from "../support/api-client";
import { startBehindUpstream, type HandWrittenUpstreamHarness } from "../support/inference-harness";
import type { TestAccount } from "../support/test-server";

/**
 * A customer's own upstream (BYOK `api_base`) can answer every request with a body as large
 * as MAX_UPSTREAM_BODY_BYTES, and the runtime buffers it whether or not it is read: one
 * account's large whole answers in flight are bounded (UPSTREAM_ANSWER_BYTES_PER_ACCOUNT), so
 * many concurrent requests cannot make the process hold that much per request. Another
 * account's room is its own. A refused answer's upstream call is still charged when the
 * platform pays for it: it answered 200 (the upper bound of an attempt that failed before
 * serving, src/metering/README.md).
 */

const MiB = 1024 * 1024;
const ANSWER = 2 * MiB;
/** Sent at once; the rest of an answer waits for the test's release. */
const FIRST = 1.5 * MiB;
/** Room for one answer, not for the first part of two. */
const ROOM = 2.5 * MiB;

let release: () => void = () => {};
let harness: HandWrittenUpstreamHarness;
let other: TestAccount;

/** A chat completion of about `bytes`, whose body past its first FIRST bytes follows only once the test releases it. */
function heldAnswer(bytes: number): Response {
  const head = '{"id":"chatcmpl-room","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"';
  const tail = '"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}';
  const body = new TextEncoder().encode(head + "r".repeat(bytes - head.length - tail.length) + tail);
  const released = new Promise<void>((resolve) => {
    const previous = release;
    release = () => {
      previous();
      resolve();
    };
  });
  return new Response(
    new ReadableStream<Uint8Array>({
      async start(controller) {
        // The runtime sends a stream's head with its first bytes (and without the declared
        // length, so the gateway counts the answer as it reads it): a part now, the rest once released.
        controller.enqueue(body.subarray(0, FIRST));
        await released;
        controller.enqueue(body.subarray(FIRST));
        controller.close();
      },
    }),
    { headers: { "content-type": "application/json", "content-length": String(body.byteLength) } },
  );
}

beforeAll(async () => {
  harness = await startBehindUpstream(async (request) => {
    const { messages } = (await request.json()) as { messages: Array<{ content: string }> };
    // "small" asks for an ordinary answer, sent at once.
    return messages[0]!.content === "small" ? heldAnswerNow() : heldAnswer(ANSWER);
  }, { upstreamAnswerBytesPerAccount: ROOM });
  other = await harness.server.createAccount(undefined, 100_000_000);
});
afterAll(() => harness.close());

function heldAnswerNow(): Response {
  return new Response(JSON.stringify({ id: "chatcmpl-s", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }), {
    headers: { "content-type": "application/json" },
  });
}

function ask(apiKey: string, content = "large") {
  return harness.server.api("POST", "/v1/chat/completions", { token: apiKey, body: { model: "mock-openai/gpt-4o-mini", max_tokens: 10, messages: [{ role: "user", content }] } });
}

/** Until the account holds room for an answer in flight (its first part has been read). */
async function untilHeld(accountId: string): Promise<void> {
  // Its first part arrives in several reads: the count grows with each.
  for (let waited = 0; waited < 5_000 && harness.server.server.services.answerBytes.heldFor(accountId) < FIRST; waited += 10) await Bun.sleep(10);
  expect(harness.server.server.services.answerBytes.heldFor(accountId)).toBeGreaterThanOrEqual(FIRST);
}

/** The request's record: failed, and its one attempt (answered 200, then refused) charged on the upper bound. */
async function expectChargedUnserved(requestId: string): Promise<void> {
  await harness.server.server.services.writeBuffer.flush();
  const sql = postgres(harness.server.databaseUrl, { max: 1 });
  try {
    const [record] = (await sql`select * from requests where request_id = ${requestId}`).map(normaliseRow);
    expect(record).toMatchObject({ status: "failed", billing_status: "computed", funding_source: "cloud_credit" });
    expect(record.attempts).toMatchObject([{ ordinal: 1, status_code: 200, outcome: "provider_error" }]);
    const [unserved] = record.charge_audit.unserved_attempts;
    // max_tokens 10 bounds the output of an answer generated whole before it was sent.
    expect(unserved.buckets.output).toBe(10);
    expect(unserved.charge_micro_usd).toBeGreaterThan(0);
    expect(Number(record.final_charge_micro_usd)).toBe(unserved.charge_micro_usd);
  } finally {
    await sql.end();
  }
}

describe("one account's large whole answers in flight", () => {
  test("one past the account's room is a 502 as it is read; another account's, and an ordinary answer, are served", async () => {
    const first = ask(harness.account.apiKey);
    await untilHeld(harness.account.accountId);
    const otherAccount = ask(other.apiKey);
    await untilHeld(other.accountId);
    // What both accounts hold shows on /metrics, summed.
    const held = harness.server.server.services.answerBytes.heldFor(harness.account.accountId) + harness.server.server.services.answerBytes.heldFor(other.accountId);
    expect(await metricValue(harness.server.url, "switchyard_large_answer_bytes")).toBe(held);
    // The first's body has not all come: a second large answer for the same account has no room.
    const refused = await ask(harness.account.apiKey);
    expect(refused.status).toBe(502);
    expect(refused.body.error.code).toBe("upstream_invalid_response");
    expect(refused.body.error.message).toContain("UPSTREAM_ANSWER_BYTES_PER_ACCOUNT");
    await expectChargedUnserved(refused.headers.get("x-request-id")!);
    // An ordinary answer is never counted.
    expect((await ask(harness.account.apiKey, "small")).status).toBe(200);
    release();
    const [served, othersServed] = await Promise.all([first, otherAccount]);
    expect(served.status).toBe(200);
    expect(served.body.choices[0].message.content.length).toBeGreaterThan(ANSWER - 1024);
    expect(othersServed.status).toBe(200);
    // The room came back with the answers: the account's next large answer is served.
    expect(harness.server.server.services.answerBytes.heldFor(harness.account.accountId)).toBe(0);
    expect(await metricValue(harness.server.url, "switchyard_large_answer_bytes")).toBe(0);
    const next = ask(harness.account.apiKey);
    await untilHeld(harness.account.accountId);
    release();
    expect((await next).status).toBe(200);
    expect(harness.server.server.services.answerBytes.heldFor(harness.account.accountId)).toBe(0);
  });
});
