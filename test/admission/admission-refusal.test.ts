import { expect, test } from "bun:test";
import { ERROR_TABLE } from "../../src/errors/error-table";
import { REFUSAL_KIND, refusal, type RefusalCode } from "../../src/admission/admission-check";
import { refusalError } from "../../src/admission/admission-refusal";

test("a refusal's status is the error table's for its code, the same the client is answered with", () => {
  const statuses = (Object.keys(REFUSAL_KIND) as RefusalCode[]).map((code) => {
    const refused = refusal(code, "no");
    return { code, refusal: refused.status as number, answer: refusalError(refused).status, table: ERROR_TABLE[REFUSAL_KIND[code]].status as number };
  });
  // docs/api/policies.md "Policies": what outside clients rely on.
  expect(statuses).toEqual([
    { code: "payment_required", refusal: 402, answer: 402, table: 402 },
    { code: "budget_exceeded", refusal: 402, answer: 402, table: 402 },
    { code: "rate_limit_exceeded", refusal: 429, answer: 429, table: 429 },
    { code: "permission_denied", refusal: 403, answer: 403, table: 403 },
  ]);
});
