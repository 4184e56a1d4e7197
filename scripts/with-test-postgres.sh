#!/usr/bin/env bash
# Runs a command with a throw-away PostgreSQL 15 server for the PostgreSQL tests and benchmarks:
#   scripts/with-test-postgres.sh ctest --output-on-failure
# Starts `initdb -A trust` + `pg_ctl` in a temp directory, as the unprivileged user `postgres`
# when run as root (PostgreSQL refuses to run as root), listening on 127.0.0.1 at a free port
# and on a unix socket in that directory; exports GPUPLAN_TEST_PG_URL (a libpq URI of the admin
# database; the tests create and drop their own databases); runs the command; stops the server
# and removes the directory whatever the command's outcome. Exit status: the command's.
# Without PostgreSQL binaries: exit 1 when GPUPLAN_TEST_PG_REQUIRED=1 (CI), else a warning and
# the command runs with the PostgreSQL tests skipped (ctest lists them as "Skipped").
set -euo pipefail

PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}
if [[ $# -eq 0 ]]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi
if [[ -z "${PG_BIN}" || ! -x "${PG_BIN}/initdb" ]]; then
  # CI (.ci/run sets GPUPLAN_TEST_PG_REQUIRED=1) fails here; a developer's machine without
  # PostgreSQL runs the command anyway and the PostgreSQL tests report themselves Skipped.
  if [[ "${GPUPLAN_TEST_PG_REQUIRED:-0}" == 1 ]]; then
    echo "with-test-postgres: no PostgreSQL server binaries (install postgresql-15: scripts/install-deps.sh)" >&2
    exit 1
  fi
  echo "with-test-postgres: WARNING: no PostgreSQL server binaries (scripts/install-deps.sh installs them):" \
    "the PostgreSQL tests will be SKIPPED" >&2
  unset GPUPLAN_TEST_PG_URL
  exec "$@"
fi

dir=$(mktemp -d /tmp/gpuplan-pg.XXXXXX)
as_pg=()
if [[ $(id -u) -eq 0 ]]; then
  id postgres >/dev/null 2>&1 || { echo "with-test-postgres: running as root needs a 'postgres' user" >&2; exit 1; }
  chown postgres: "$dir"
  as_pg=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

cleanup() {
  "${as_pg[@]}" "${PG_BIN}/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

"${as_pg[@]}" "${PG_BIN}/initdb" -A trust -U gpuplan -E UTF8 --locale=C.UTF-8 -D "$dir/data" >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
# fsync off: a test server, thrown away after; max_connections for parallel test processes.
"${as_pg[@]}" "${PG_BIN}/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
  start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }

export GPUPLAN_TEST_PG_URL="postgresql://gpuplan@127.0.0.1:${port}/postgres"
echo "with-test-postgres: PostgreSQL $("${PG_BIN}/postgres" --version | awk '{print $3}') at ${GPUPLAN_TEST_PG_URL}" >&2
set +e
"$@"
rc=$?
set -e
exit $rc
