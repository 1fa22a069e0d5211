/**
 * An upstream that reports a failure inside a stream it already started (HTTP 200, then its
 * protocol's error frame): the client gets the failure in its own protocol, and the request
 * is recorded as failed with a provider_error attempt, for every client × upstream pair.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type postgres from "postgres";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";
import { PROTOCOLS, UPSTREAM, closeClients, database, flush, recordsFor, send, type Protocol } from "../metering/metering-support";

/** The terminal error frame of each client protocol (reference: mid-stream error frames). */
const ERROR_FRAME: Record<Protocol, RegExp> = {
  "openai-chat": /data: \{"error":\{/,
  "openai-responses": /event: response\.failed\ndata: \{"type":"response\.failed"/,
  "anthropic-messages": /event: error\ndata: \{"type":"error","error":\{/,
  "google-generate-content": /data: \{"error":\{"code":/,
};

async function attempts(harness: InferenceHarness, provider: string, outcome: string): Promise<number> {
  const text = await fetch(`${harness.server.url}/metrics`).then((r) => r.text());
  const line = text.split("\n").find((l) => l.startsWith(`switchyard_upstream_attempts_total{provider="${provider}",outcome="${outcome}"}`));
  return Number(line?.split(" ").at(-1) ?? 0);
}

// "auto" translates stream chunks inline; "pool" sends every chunk (and a passthrough's
// accounting copy) to a worker, answered asynchronously.
for (const translationMode of ["auto", "pool"] as const) {
  describe(`an error frame mid-stream (TRANSLATION_MODE=${translationMode})`, () => {
    let harness: InferenceHarness;
    let sql: postgres.Sql;
    beforeAll(async () => {
      harness = await startInferenceHarness({ translationMode });
      sql = database(harness.server.databaseUrl);
    });
    afterAll(async () => {
      await closeClients();
      await harness.close();
    });

    for (const client of PROTOCOLS) {
      for (const upstream of PROTOCOLS) {
        test(`${client} ← ${upstream}: relayed as the client's error frame, recorded as failed`, async () => {
          const target = UPSTREAM[upstream];
          const errorsBefore = await attempts(harness, target.providerId, "provider_error");
          const sent = await send(harness.server.url, harness.account.apiKey, client, `${target.model}@stream_error`, { stream: true });
          expect(sent.status).toBe(200);
          expect(sent.text).toMatch(ERROR_FRAME[client]);
          // Output came before the failure: it is what the client saw first.
          expect(sent.text.indexOf("Hello")).toBeGreaterThan(-1);
          expect(sent.text.indexOf("Hello")).toBeLessThan(sent.text.search(ERROR_FRAME[client]));
          await flush(harness);
          const [record] = await recordsFor(sql, sent.requestId);
          expect(record).toMatchObject({ status: "failed", provider_id: target.providerId, streamed: true });
          // What was produced before the failure is billed, as an estimate.
          expect(record.usage_evidence.source).toBe("estimated");
          expect(record.completion_tokens).toBeGreaterThan(0);
          expect(await attempts(harness, target.providerId, "provider_error")).toBe(errorsBefore + 1);
        });
      }
    }
  });
}
