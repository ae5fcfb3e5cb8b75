#!/bin/sh
# The parts of the official postgres image's entrypoint that docker-compose.yml uses: a cluster made on
# first start in PGDATA (trust authentication, as POSTGRES_HOST_AUTH_METHOD=trust), the database
# POSTGRES_DB, listening on every address (PGPORT, default 5432). Development only.
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
BIN=$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  "$BIN/initdb" -D "$PGDATA" -U postgres --auth=trust >/dev/null
  # Other containers connect over the compose network, not only from loopback.
  printf 'host all all 0.0.0.0/0 trust\nhost all all ::/0 trust\n' >>"$PGDATA/pg_hba.conf"
  "$BIN/pg_ctl" -D "$PGDATA" -o "-c listen_addresses='' -k /tmp" -w start >/dev/null
  psql -h /tmp -U postgres -d postgres -qc "create database \"${POSTGRES_DB:-postgres}\"" 2>/dev/null || true
  "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp -p "${PGPORT:-5432}"
