#!/usr/bin/env bash
# Makes sure a Chromium the docs browser test can drive is installed at /usr/bin/chromium.
# Fast no-op when it is already there. As root with apt-get, installs Debian's `chromium`
# package (apt-get update once, then install); otherwise explains how to install it and exits 1.
# The path can be overridden with CHROMIUM_PATH (the test reads the same variable).
set -euo pipefail

chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ -x "$chromium" ]; then
  exit 0
fi

if [ "$chromium" = /usr/bin/chromium ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $chromium is missing; installing Debian's chromium package..." >&2
  export DEBIAN_FRONTEND=noninteractive
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  # Quiet on success; on failure show apt's output.
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "ensure-chromium: installing chromium with apt-get failed (see above)" >&2
    exit 1
  fi
  if [ -x "$chromium" ]; then
    echo "ensure-chromium: installed $("$chromium" --version 2>/dev/null || echo chromium)" >&2
    exit 0
  fi
  echo "ensure-chromium: apt-get install chromium finished but $chromium is still missing" >&2
  exit 1
fi

cat >&2 <<MSG
ensure-chromium: no Chromium at $chromium, and it cannot be installed automatically here
(needs root and apt-get). The docs browser test (tests/docs) needs it. Install it with:
    sudo apt-get update && sudo apt-get install -y chromium
or point CHROMIUM_PATH at an existing Chromium/Chrome executable.
MSG
exit 1
