-- Wallet balance and ledger for the billing endpoints; the account in every WHERE.

-- name: billingBalance
select balance_micro_usd, reserved_micro_usd from wallets where account_id = $1;

-- name: listLedgerEntries
-- Newest first. Entries booked in one write-buffer flush share created_at; among
-- them the request each settles orders them (incremental sort over the index order).
-- $2 null = the whole account; set = only entries attributed to that
-- namespace (a namespace-bound credential). The client-visible request id comes
-- from the request record the entry settles, when there is one.
select l.id, l.kind, l.amount_micro_usd, r.request_id, l.namespace_id, l.created_at
  from ledger_entries l
  left join requests r on r.id = l.request_record_id and r.account_id = l.account_id
 where l.account_id = $1 and ($2::text is null or l.namespace_id = $2::text)
 order by l.created_at desc, coalesce(r.created_at, l.created_at) desc, l.id desc
 limit $3 offset $4;
