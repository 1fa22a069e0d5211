import { walletBalance } from "../management/billing/billing-service";
import { parseRequestFilters } from "../management/usage/request-filters";
import { dailyUsage, eachRequestPage, listRequests, namespaceUsageAggregate, unrecordedRefusalCounts } from "../management/usage/usage-service";
import type { Services } from "../services";
import type { PickedNamespace } from "./console-namespace";
import type { QueryFields } from "./management-request";
import { OVERVIEW_PERIODS, type OverviewData, type OverviewPeriod, type OverviewSplit } from "./overview-page";
import { requestBreakdown, withUnrecordedRefusals } from "./request-breakdown";
import { requestKeys } from "./request-keys";

/** Requests read at most to count refusals, errors and BYOK use (ten pages of the history). */
const BREAKDOWN_ROWS = 1_000;
const BREAKDOWN_PAGE_ROWS = 250;
const DAY_MS = 86_400_000;

/** `?days=` (1, 7, 30 or 90; else 30) and `?by=` (`model`; else `key`). */
export function overviewChoice(query: QueryFields): { period: OverviewPeriod; split: OverviewSplit } {
  const period = OVERVIEW_PERIODS.find((days) => String(days) === query.days) ?? 30;
  return { period, split: query.by === "model" ? "model" : "key" };
}

/**
 * Everything the overview shows, through the JSON API's services: the wallet, the
 * namespace aggregate, daily usage by model and by key (`GET …/usage/daily`), and the
 * period's history read page by page for what ended badly and what BYOK served.
 * The period is whole UTC days: today and the `period - 1` days before it.
 */
export async function overviewData(services: Services, accountId: string, picked: PickedNamespace, query: QueryFields, now = new Date()): Promise<OverviewData> {
  const { period, split } = overviewChoice(query);
  const tenant = { accountId, namespaceId: picked.namespace.id };
  const to = now;
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - (period - 1) * DAY_MS);
  const window = { from, to };
  const historyQuery = parseRequestFilters({ from: from.toISOString(), to: to.toISOString() });
  const [balance, usage, byModel, byKey, keys, breakdown, unrecorded, anyRequest] = await Promise.all([
    walletBalance(services, accountId),
    namespaceUsageAggregate(services, tenant, window),
    dailyUsage(services, tenant, window, "model"),
    dailyUsage(services, tenant, window, "api_key"),
    requestKeys(services, tenant),
    requestBreakdown(eachRequestPage(services, tenant, historyQuery, BREAKDOWN_PAGE_ROWS), BREAKDOWN_ROWS),
    unrecordedRefusalCounts(services, tenant, window),
    listRequests(services, tenant, { offset: 0, limit: 1 }),
  ]);
  const model = services.catalog.listModels()[0]?.id ?? "openai/gpt-4.1-mini";
  return {
    ...picked,
    balance,
    usage,
    period,
    split,
    from,
    to,
    byModel: byModel.data,
    byKey: byKey.data,
    keyNames: new Map(keys.map((key) => [key.id, key.display_name])),
    breakdown: withUnrecordedRefusals(breakdown, unrecorded),
    ...(anyRequest.data.length === 0 ? { firstRun: { baseUrl: services.config.publicUrl, model, namespaceId: picked.namespace.id } } : {}),
  };
}
