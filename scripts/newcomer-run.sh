#!/usr/bin/env bash
# A newcomer's first run, timed stage by stage: a fresh clone in a temporary folder, `npm install`,
# `npm run build` (docs/getting-started.md step 1), then the page's other blocks against the
# scripted fake LLM, exactly as test/docs/getting-started.test.ts runs them (service start, setup,
# a strategy, the tool server, an assistant, `parley chat` with a tool call, the call record).
#
#   scripts/newcomer-run.sh [repository]      default: this checkout (its committed HEAD)
#
# NEWCOMER_COLD_CACHE=1 installs with an empty npm cache, so every package comes from the registry
# (by default npm's usual cache is used, as on a machine that has installed something before).
# NEWCOMER_KEEP=1 keeps the temporary folder (its path is printed) with each stage's log.
set -euo pipefail

repository=${1:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}
work=$(mktemp -d "${TMPDIR:-/tmp}/newcomer-XXXXXX")
cleanup() {
  if [[ ${NEWCOMER_KEEP:-0} == 1 ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

npm_cache=()
if [[ ${NEWCOMER_COLD_CACHE:-0} == 1 ]]; then npm_cache=(--cache "$work/npm-cache"); fi

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
run_start=$(now)

# stage <name> <command…>: runs the command with its output in $work/<name>.log, and prints its
# wall time and the CPU time (user + system) it and its children used. On a shared machine the
# wall time grows with the others' load; the CPU time does not, and the wall time of an
# otherwise idle machine is near it for the stages that run on one core (the SQLite compile).
stage() {
  local name=$1 real user sys
  shift
  local TIMEFORMAT='%R %U %S'
  if ! { time "$@" > "$work/$name.log" 2>&1; } 2> "$work/$name.time"; then
    echo "stage '$name' failed; the end of its log:" >&2
    tail -n 60 "$work/$name.log" >&2
    NEWCOMER_KEEP=1
    exit 1
  fi
  read -r real user sys < <(tail -n 1 "$work/$name.time")
  cpu_total=$(awk -v c="${cpu_total:-0}" -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", c + u + s }')
  printf '%-22s %7.1f s wall %7s s CPU\n' "$name" "$real" "$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')"
}

# The parts of `npm install` that take the time, from its own timing lines (npm --timing).
install_breakdown() {
  local log=$work/npm-install.log
  ms() { sed -n "s|^npm timing $1 Completed in \([0-9]*\)ms$|\1|p" "$log" | tail -n 1; }
  local unpack sqlite prepare_start
  unpack=$(ms 'reify:unpack')
  sqlite=$(ms 'build:run:install:node_modules/better-sqlite3')
  printf '  %-20s %7s s\n' 'unpack packages' "$(awk -v m="${unpack:-0}" 'BEGIN { printf "%.1f", m / 1000 }')"
  printf '  %-20s %7s s\n' 'better-sqlite3 build' "$(awk -v m="${sqlite:-0}" 'BEGIN { printf "%.1f", m / 1000 }')"
  # prepare (the console build) is the last command npm runs; its nested runs print their timing last.
  prepare_start=$(ms 'reify')
  local total
  total=$(ms 'command:install')
  printf '  %-20s %7s s\n' 'prepare (console)' "$(awk -v t="${total:-0}" -v r="${prepare_start:-0}" 'BEGIN { printf "%.1f", (t - r) / 1000 }')"
  if grep -q EBADENGINE "$log"; then echo '  EBADENGINE warnings:' && grep EBADENGINE "$log" | sed 's/^/    /'; fi
}

echo "newcomer run of $repository in $work ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start)"
stage clone git clone --quiet "$repository" "$work/parley"
cd "$work/parley"
# The page's step 1, as written there (npm install && npm run build), each timed on its own.
grep -q '^npm install && npm run build$' docs/getting-started.md || { echo 'docs/getting-started.md step 1 no longer says "npm install && npm run build"; update this script' >&2; exit 1; }
stage npm-install npm install --timing "${npm_cache[@]}"
install_breakdown
stage npm-run-build npm run build
echo "  packages: $(npm ls --all --parseable 2>/dev/null | wc -l) in node_modules' tree, $(du -sm node_modules | cut -f1) MB"
# Steps 2 to 8 with the scripted fake LLM (the only line the test changes); SQLite, as a newcomer runs it.
stage getting-started env PARLEY_TEST_DIALECTS=sqlite node --import tsx --test test/docs/getting-started.test.ts
echo "  the test's verdict (a conversation with a tool call and its record): $(grep -E '^# (pass|fail)' "$work/getting-started.log" | tr '\n' ' ')"
printf '%-22s %7s s wall %7s s CPU (load average %s at the end)\n' total "$(seconds "$run_start" "$(now)")" "$cpu_total" "$(cut -d' ' -f1-3 /proc/loadavg)"
