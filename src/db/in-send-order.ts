/**
 * Awaits statements sent together on one connection and throws the first failure in the
 * order they were sent. postgres.js writes a statement as soon as it is made, without
 * waiting for the answer to the one before (on a connection already prepared for it), so
 * statements made one after another and awaited here share a round trip: under load each
 * round trip of a flush also waits for a turn of the event loop, which is a whole wave of
 * requests. PostgreSQL still runs them one after another, in that order.
 *
 * In a transaction, the statements after a failed one fail only with "transaction is
 * aborted" (25P02), which says nothing of the cause; the first failure in send order is
 * the cause. Every statement is awaited, so none is left with a rejection nobody handles.
 */
export async function inSendOrder(statements: readonly PromiseLike<unknown>[]): Promise<void> {
  const outcomes = await Promise.allSettled(statements);
  for (const outcome of outcomes) if (outcome.status === "rejected") throw outcome.reason;
}
