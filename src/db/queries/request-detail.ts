import type { Sql } from "../connect-database";
import type { IrWarning } from "../../ir/ir-warning";
import type { UsageEvidence } from "../usage-evidence-shape";
import type { RequestRecordRow } from "./usage";
import { runQueryRow } from "./run-query";

/** A request record as the history lists it, with every warning it kept. */
export interface RequestDetailRow extends RequestRecordRow {
  warnings: IrWarning[];
}

/** The row as stored (every column), its JSON documents parsed. */
type StoredRequestRow = Omit<RequestRecordRow, "usage_evidence" | "refusal" | "routing_preset"> & { evidence: UsageEvidence; warning_list: IrWarning[] };

export async function findNamespaceRequest(sql: Sql, accountId: string, namespaceId: string, requestId: string): Promise<RequestDetailRow | undefined> {
  const row = await runQueryRow<StoredRequestRow>(sql, "findNamespaceRequest", [accountId, namespaceId, requestId]);
  if (!row) return undefined;
  const { evidence, warning_list: warnings, ...record } = row;
  // The policy that refused it and the routing preset it named are kept as warnings, as the history reads them.
  const refusal = warnings.find((warning) => warning.code === "refused_by_policy");
  return {
    ...record,
    usage_evidence: evidence,
    refusal: refusal ? { ...(refusal.field === undefined ? {} : { field: refusal.field }), message: refusal.message } : null,
    routing_preset: warnings.find((warning) => warning.code === "routing_preset")?.field ?? null,
    warnings,
  };
}
