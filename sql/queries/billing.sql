-- Wallet balance and ledger for the billing endpoints; the account in every WHERE.

-- name: billingBalance
select balance_micro_usd, reserved_micro_usd from wallets where account_id = $1;

-- name: listLedgerEntries
-- Newest first. Entries booked in one write-buffer flush share created_at; among
-- them the request each settles orders them (incremental sort over the index order).
-- $2 null = the whole account; set = only entries attributed to that
-- namespace (a namespace-bound credential). The client-visible request id comes
-- from the request record the entry settles, when there is one.
-- $5/$6/$7 (null: from the newest) the position of the last entry of the previous page
-- (findLedgerEntryPosition): the page is what sorts after it, read through the index
-- from its created_at down, whatever its depth.
select l.id, l.kind, l.amount_micro_usd, r.request_id, l.namespace_id, l.created_at
  from ledger_entries l
  left join requests r on r.id = l.request_record_id and r.account_id = l.account_id
 where l.account_id = $1 and ($2::text is null or l.namespace_id = $2::text)
   and ($5::text is null or (l.created_at, coalesce(r.created_at, l.created_at), l.id) < ($5::text::timestamptz, $6::text::timestamptz, $7::text))
   -- Implied by the row comparison; a plain bound lets the index scan start at the position.
   and ($5::text is null or l.created_at <= $5::text::timestamptz)
 order by l.created_at desc, coalesce(r.created_at, l.created_at) desc, l.id desc
 limit $3 offset $4;

-- name: findLedgerEntryPosition
-- Where an entry the caller may list ($3, its id; $2 as in listLedgerEntries) stands in
-- that listing: its three sort keys, timestamps as text so the microseconds survive.
-- Another account's or namespace's entry, like a missing one, is no row.
select l.created_at::text as created_at, coalesce(r.created_at, l.created_at)::text as settled_created_at, l.id
  from ledger_entries l
  left join requests r on r.id = l.request_record_id and r.account_id = l.account_id
 where l.account_id = $1 and ($2::text is null or l.namespace_id = $2::text) and l.id = $3;
