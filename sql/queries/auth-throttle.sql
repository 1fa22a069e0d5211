-- name: throttleLockedKeys
-- The keys among $1 that are locked now, with when each lock ends.
select key, locked_until from auth_throttle where key = any($1::text[]) and locked_until > now();

-- name: throttleReset
delete from auth_throttle where key = any($1::text[]);

-- name: throttleSweep
-- Rows whose window and lock have both passed count nothing any more.
delete from auth_throttle
 where window_start < now() - interval '1 day' and (locked_until is null or locked_until < now());

-- name: throttleEnsure
-- Makes sure key $1 has a row to lock; a new one has counted nothing yet.
insert into auth_throttle (key, failures, window_start) values ($1, 0, now())
on conflict (key) do nothing;

-- name: throttleTake
-- Counts one attempt against key $1 in a fixed window of $3 seconds that starts at the
-- first attempt; the attempt that reaches $2 locks the key for $4 seconds. Nothing is
-- counted while the key is locked: no row comes back then. The row lock of the update makes
-- concurrent takes on any instance queue, and each re-reads the lock the previous one set.
update auth_throttle as t set
  failures = case when t.window_start <= now() - make_interval(secs => $3::int) then 1 else t.failures + 1 end,
  window_start = case when t.window_start <= now() - make_interval(secs => $3::int) then now() else t.window_start end,
  locked_until = case
    when (case when t.window_start <= now() - make_interval(secs => $3::int) then 1 else t.failures + 1 end) >= $2::int
      then now() + make_interval(secs => $4::int)
    else t.locked_until
  end
 where t.key = $1 and (t.locked_until is null or t.locked_until <= now())
returning failures;

-- name: throttleRefund
-- Gives back one attempt taken on key $1 that turned out right; the lock goes when the
-- count falls back below the limit $2 (a lock that attempt set, or one it helped set).
update auth_throttle set
  failures = greatest(failures - 1, 0),
  locked_until = case when failures - 1 < $2::int then null else locked_until end
 where key = $1;
