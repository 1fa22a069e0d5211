#!/bin/sh
# The entrypoint of deploy/postgres.Containerfile: what the official postgres image's does
# with the same variables, for Debian's packages.
#
#   - as root (the default): prepares PGDATA and the socket folder for the postgres user,
#     whatever a fresh volume or a host folder mounted there belongs to, then runs itself
#     again as that user;
#   - on a PGDATA with no cluster: initdb with POSTGRES_USER (default postgres) as the
#     superuser, whose password is POSTGRES_PASSWORD (required), and POSTGRES_DB (default:
#     the user's name) created. Connections over the network need that password
#     (scram-sha-256); the socket inside the container, used by pg_isready, does not;
#   - then PostgreSQL in the foreground as PID 1, listening on every address, with the
#     command's arguments (`postgres -c max_connections=100` from the compose file).
# Any other command (`bash`, `psql …`) is run as given.
set -eu

if [ "${1#-}" != "$1" ]; then
  set -- postgres "$@"
fi
if [ "$1" != postgres ]; then
  exec "$@"
fi
shift

PGDATA="${PGDATA:-/var/lib/postgresql/data}"
export PGDATA

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" postgres "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD: the password of the database's superuser}"
  user="${POSTGRES_USER:-postgres}"
  database="${POSTGRES_DB:-$user}"
  # The password goes through a pipe, never a command line or a file.
  printf '%s\n' "$POSTGRES_PASSWORD" | initdb --username="$user" --pwfile=/dev/stdin \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  # initdb lets in loopback only; the instances come from the container network.
  printf '%s\n' 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  if [ "$database" != postgres ]; then
    # A server on the socket only for the moment it takes: nothing reaches it over the
    # network before the database exists.
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    # psql quotes the name (:"database"); it reads the statement from stdin to do so.
    echo 'CREATE DATABASE :"database";' |
      psql -v ON_ERROR_STOP=1 -v database="$database" --username="$user" --dbname=postgres --no-psqlrc --quiet
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "postgres-entrypoint: made the cluster in $PGDATA (superuser $user, database $database)" >&2
fi

exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
