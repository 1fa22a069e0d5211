import { compileContentPattern } from "./content-pattern";
import { isPolicyKind, validatePolicySpec, type GuardrailSpec } from "./policy-spec";
import type { PolicyRecord } from "./effective-policy";

/** A stored policy row, as far as the engine needs it. */
export interface StoredPolicy {
  id: string;
  name: string;
  kind: string;
  spec: unknown;
  disabled_at: Date | null;
}

/**
 * Turns a stored policy into the engine's typed record, its content patterns compiled
 * once. Specs are validated on every write, so a failure here means the row was
 * written around the API: it is an error, never a policy silently dropped.
 */
export function toPolicyRecord(row: StoredPolicy): PolicyRecord {
  if (!isPolicyKind(row.kind)) throw new Error(`policy ${row.id} has an unknown kind`);
  let spec;
  try {
    spec = validatePolicySpec(row.kind, row.spec);
  } catch {
    throw new Error(`policy ${row.id} has a stored spec that does not validate`);
  }
  const guardrail: GuardrailSpec | null | undefined =
    row.kind === "guardrail" ? (spec as GuardrailSpec) : row.kind === "preset" ? (spec as { guardrail: GuardrailSpec | null }).guardrail : undefined;
  const compiledPatterns = (guardrail?.content_patterns ?? []).map((entry) => compileContentPattern(entry.pattern));
  return { id: row.id, name: row.name, kind: row.kind, spec, disabled: row.disabled_at !== null, compiledPatterns } as PolicyRecord;
}
