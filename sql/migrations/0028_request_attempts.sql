-- Each request record keeps its attempts: which provider and model each one tried, how it
-- ended (success, provider_error, timeout, client_error, aborted), the upstream's HTTP
-- status and the gateway's error kind, its duration and time to first token. JSON text
-- the gateway wrote itself, read back whole by the request detail (like warnings, 0009).
-- Never an upstream's error text. Null on records written before it.
alter table requests add column attempts text;
