#!/usr/bin/env bash
# Makes sure the system packages the test suite talks to are present: PostgreSQL (second
# dialect), Kamailio, rtpengine, baresip and sipp (SIP peers), espeak-ng and sox (speech for the call
# tests) and Chromium (the console's browser tests). Installs them with apt-get when run as root
# on Debian; otherwise says what to install.
set -euo pipefail

missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v kamailio >/dev/null 2>&1 || [[ -x /usr/sbin/kamailio ]] || missing+=(kamailio)
[[ -x /usr/bin/rtpengine ]] || missing+=(rtpengine-daemon)
[[ -x /usr/bin/baresip && -f /usr/lib/baresip/modules/ctrl_tcp.so ]] || missing+=(baresip-core)
[[ -x /usr/bin/sipp ]] || missing+=(sip-tester)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v sox >/dev/null 2>&1 || missing+=(sox)
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  echo "installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
else
  echo "The test suite needs: ${missing[*]} (Debian: sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi
