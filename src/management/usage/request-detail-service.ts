import { findNamespaceRequest } from "../../db/queries/request-detail";
import type { IrWarning } from "../../ir/ir-warning";
import { notFound } from "../../errors/api-error";
import type { Tenant } from "../tenant";
import { requestRecordEnvelope, type RequestRecordEnvelope, type UsageServiceDeps } from "./usage-service";

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** One request of the history with the warnings its record kept (dropped fields, fallbacks, the refusing policy). */
export type RequestDetail = RequestRecordEnvelope & { warnings: IrWarning[] };

/**
 * The newest record of the namespace with this client-visible request id; a request of
 * another namespace or account is the same 404 as one never seen.
 */
export async function findRequestDetail(deps: UsageServiceDeps, tenant: Tenant, requestId: string): Promise<RequestDetail> {
  // Request ids are at most 128 printable ASCII characters (pipeline/request-id.ts): anything else was never one.
  if (!REQUEST_ID.test(requestId)) throw notFound("request");
  const row = await findNamespaceRequest(deps.db.sql, tenant.accountId, tenant.namespaceId, requestId);
  if (!row) throw notFound("request");
  return { ...requestRecordEnvelope(row), warnings: row.warnings };
}
