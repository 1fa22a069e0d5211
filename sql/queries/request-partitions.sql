-- The monthly partitions of the request table (migration 0025, src/db/request-partitions.ts).

-- name: ensureRequestPartitions
-- The partitions of the month of $1 and of the $2 months after it, those missing created
-- (rows of those months that waited in the default partition move in). One row per
-- partition created.
select request_partitions_ensure($1::timestamptz, $2::int) as name;

-- name: dropExpiredRequestPartitions
-- Retention: the partitions whose month ended at least $2 months before $1, dropped. One
-- row per partition dropped.
select request_partitions_drop_expired($1::timestamptz, $2::int) as name;

-- name: requestsWithoutMonth
-- Whether any record waits in the default partition for its month's partition.
select exists (select 1 from requests_default) as waiting;
