#!/usr/bin/env bash
# Benchmarks print ratios against a bare baseline measured in the same run; they are not part of npm test.
set -euo pipefail
cd "$(dirname "$0")/.."
export PARLEY_TEST_DIALECTS="${PARLEY_BENCH_DIALECT:-sqlite}"
if [[ "$PARLEY_TEST_DIALECTS" == postgres && -z "${PARLEY_TEST_PG_URL:-}" ]]; then
  eval "$(scripts/pg-cluster.sh start)"
  trap 'scripts/pg-cluster.sh stop "$PG_CLUSTER_DIR"' EXIT
fi
npm run build --silent # benches that start a service process run the built one, as `npm start` does
if [[ $# -gt 0 ]]; then files=("$@"); else mapfile -t files < <(find bench -name '*.bench.ts' | sort); fi
for f in "${files[@]}"; do node --import tsx "$f"; done
