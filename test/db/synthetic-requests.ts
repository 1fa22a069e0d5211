import type { Sql } from "../../src/db/connect-database";

export interface SyntheticRequests {
  /** Rows to insert, spread evenly over [from, to) in created_at order. */
  count: number;
  from: Date;
  to: Date;
  /** Row n belongs to account `acct_<n % accounts>` and namespace `ns_<n % namespaces>` of that account. */
  accounts: number;
  namespaces: number;
  /** Record ids are `<prefix><n>`, client request ids `q_<n>`. */
  idPrefix?: string;
  /** Every row to this account and namespace instead (`accounts` and `namespaces` then only vary the keys' numbering). */
  tenant?: { accountId: string; namespaceId: string };
}

/**
 * Request records made by PostgreSQL itself (generate_series), for tests that need a
 * table of realistic size and shape quickly: every column the request table had at
 * migration 0024, so it fills the old table and the partitioned one alike. Every tenth
 * request failed; models, providers and keys cycle. Namespaces are numbered within their
 * account (`ns_<account>_<k>`), as a namespace belongs to one account.
 */
export async function insertSyntheticRequests(sql: Sql, rows: SyntheticRequests): Promise<void> {
  await sql.unsafe(
    `insert into requests (id, request_id, account_id, namespace_id, api_key_id, status, status_code, billing_status,
                           model_id, provider_id, provider_model_id, routing_profile, funding_source, streamed,
                           finish_reason, prompt_tokens, completion_tokens, reasoning_tokens, cache_read_tokens,
                           final_charge_micro_usd, request_duration_ms, used_capabilities, usage_evidence, created_at, completed_at)
     select $1 || g, 'q_' || g, coalesce($7, 'acct_' || (g % $2)), coalesce($8, 'ns_' || (g % $2) || '_' || (g % $3 / $2)), 'key_' || (g % 40),
            case when g % 10 = 0 then 'failed' else 'succeeded' end, case when g % 10 = 0 then 502 else 200 end,
            case when g % 10 = 0 then 'not_charged' else 'computed' end,
            'p' || (g % 4) || '/m' || (g % 12), 'p' || (g % 4), 'm' || (g % 12), 'balanced', 'cloud_credit', g % 2 = 0,
            'stop', 100 + g % 900, 20 + g % 300, g % 50, case when g % 7 = 0 then 64 else 0 end,
            case when g % 10 = 0 then 0 else 30 + g % 200 end, 400 + g % 2000,
            case when g % 3 = 0 then '{text,tools}'::text[] else '{text}'::text[] end, '{"source":"provider_reported"}',
            t, t + interval '1 second'
       from generate_series(0, $4 - 1) g,
            lateral (select $5::timestamptz + (g::float8 / $4) * ($6::timestamptz - $5::timestamptz) as t) at`,
    [rows.idPrefix ?? "req_", rows.accounts, rows.namespaces, rows.count, rows.from.toISOString(), rows.to.toISOString(), rows.tenant?.accountId ?? null, rows.tenant?.namespaceId ?? null],
  );
}
