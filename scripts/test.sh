#!/usr/bin/env bash
# The whole test suite, on SQLite and on PostgreSQL (a throwaway cluster started here).
# PARLEY_TEST_DIALECTS=sqlite runs SQLite only, for a quick local loop.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/system-deps.sh
# The suite also checks the built service (bin/parley.js runs dist/): build it first.
npm run build --silent

# The SDK is generated from the service's OpenAPI document; the CLI, the console and the SDK
# tests use it, and the console tests drive the built app compiled against it, so an API change
# that breaks either fails here.
npm run --silent build:sdk >/dev/null
npm run --silent build:console >/dev/null

export PARLEY_TEST_DIALECTS="${PARLEY_TEST_DIALECTS:-sqlite,postgres}"
if [[ "$PARLEY_TEST_DIALECTS" == *postgres* && -z "${PARLEY_TEST_PG_URL:-}" ]]; then
  eval "$(scripts/pg-cluster.sh start)"
  trap 'scripts/pg-cluster.sh stop "$PG_CLUSTER_DIR"' EXIT
fi

if [[ $# -gt 0 ]]; then files=("$@"); else mapfile -t files < <(find test -name '*.test.ts' | sort); fi
# --test-force-exit: a test file whose tests are done exits even if a failed test left a server or
# socket open; without it that file's process waits forever and the suite with it.
node --import tsx --test --test-force-exit --test-concurrency="${TEST_CONCURRENCY:-2}" --test-reporter=spec "${files[@]}"
