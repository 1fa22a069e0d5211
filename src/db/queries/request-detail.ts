import type { Sql } from "../connect-database";
import type { IrWarning } from "../../ir/ir-warning";
import type { RequestRecordRow } from "./usage";
import { runQueryRow } from "./run-query";

/** A request record as the history lists it, with every warning it kept. */
export interface RequestDetailRow extends RequestRecordRow {
  warnings: IrWarning[];
}

export function findNamespaceRequest(sql: Sql, accountId: string, namespaceId: string, requestId: string): Promise<RequestDetailRow | undefined> {
  return runQueryRow<RequestDetailRow>(sql, "findNamespaceRequest", [accountId, namespaceId, requestId]);
}
