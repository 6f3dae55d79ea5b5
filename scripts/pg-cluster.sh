#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on 127.0.0.1 for the test suite.
#   scripts/pg-cluster.sh start        -> prints `export PARLEY_TEST_PG_URL=… PG_CLUSTER_DIR=…`
#   scripts/pg-cluster.sh stop <dir>
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user.
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [[ -z "$bindir" || ! -x "$bindir/initdb" ]]; then
  echo "PostgreSQL server binaries not found: apt-get install -y postgresql" >&2
  exit 1
fi

as_pg() {
  if [[ $(id -u) == 0 ]]; then su postgres -s /bin/bash -c "$1"; else bash -c "$1"; fi
}

case "${1:-}" in
  start)
    dir=$(mktemp -d /tmp/parley-pg.XXXXXX)
    chmod 755 "$dir"
    [[ $(id -u) == 0 ]] && chown postgres "$dir"
    port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
    as_pg "'$bindir/initdb' -D '$dir/data' -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8" >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    # Durability settings are for a disposable test cluster only.
    opts="-h 127.0.0.1 -p $port -k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
    as_pg "'$bindir/pg_ctl' -D '$dir/data' -o \"$opts\" -l '$dir/server.log' -w -t 60 start" >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    echo "export PARLEY_TEST_PG_URL=postgres://postgres@127.0.0.1:$port/postgres PG_CLUSTER_DIR=$dir"
    ;;
  stop)
    dir="${2:?cluster dir}"
    as_pg "'$bindir/pg_ctl' -D '$dir/data' -m immediate -w stop" >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start | stop <dir>" >&2
    exit 2
    ;;
esac
