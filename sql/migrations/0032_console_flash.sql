-- A console session's one-time message: what a form that creates something shows once on
-- the page it redirects to (post/redirect/get), such as a new key's token. Sealed under a
-- key derived from the session cookie's token, which the database never holds, so a read
-- of this table reveals nothing; taken (read and cleared) by the one GET that shows it.
alter table console_sessions add column if not exists flash bytea;
