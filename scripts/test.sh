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

# The longest files start first, so that the suite ends on short ones with both slots busy:
# in file-name order the voicemail file (about 3 minutes) started near the end and the other slot
# sat idle for most of its run. The order is from a CI run's durations (seconds, both databases);
# a file not listed runs after these in name order, and a listed file that is gone is skipped.
LONGEST_FIRST=(
  test/telephony/voicemail.test.ts          # 177
  test/docs/getting-started.test.ts         # 90 (the page on both databases, and with its ports taken)
  test/calls/voice.test.ts                  # 88
  test/telephony/turn-taking-sip.test.ts    # 85
  test/calls/turn-taking.test.ts            # 71
  test/calls/twilio.test.ts                 # 65
  test/recordings/sip.test.ts               # 58
  test/jobs/tasks.test.ts                   # 56
  test/recordings/websocket-twilio.test.ts  # 56
  test/console/voice.test.ts                # 55
  test/cli/lab.test.ts                      # 51
  test/calls/fallbacks-voice.test.ts        # 47
  test/calls/realtime.test.ts               # 44
  test/cli/chat.test.ts                     # 40
  test/telephony/inbound.test.ts            # 41
  test/console/e2e.test.ts                  # 36
  test/cli/as-code.test.ts                  # 34
  test/telephony/voices.test.ts             # 30
)
if [[ $# -gt 0 ]]; then
  files=("$@")
else
  files=()
  for f in "${LONGEST_FIRST[@]}"; do if [[ -f "$f" ]]; then files+=("$f"); fi; done
  mapfile -t rest < <(find test -name '*.test.ts' | sort | grep -vxF -f <(printf '%s\n' "${LONGEST_FIRST[@]}"))
  files+=("${rest[@]}")
fi
# Node's test runner through its run() API (scripts/run-tests.ts): `node --test` would sort the
# files by name. Two files at a time (TEST_CONCURRENCY), each exiting once its tests are done.
node --import tsx scripts/run-tests.ts "${files[@]}"
