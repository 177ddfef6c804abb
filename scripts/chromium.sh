#!/usr/bin/env bash
# Make sure Debian's headless-capable Chromium is installed, for the browser tests
# (test/integration/browser-pages.test.ts drives it with playwright-core; no browser is
# downloaded from anywhere but the distribution's own archive).
#   scripts/chromium.sh        prints the browser's path on stdout; installs it first when missing
#
# Installing needs root and apt-get (CI runs as root on a fresh Debian machine). Elsewhere it
# says what to install and exits 1. CHROMIUM_PATH names another Chromium binary.
set -euo pipefail

browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$browser" ]; then
  echo "$browser"
  exit 0
fi
if [ -n "${CHROMIUM_PATH:-}" ]; then
  echo "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "no Chromium at $browser: install Debian's package (apt-get install chromium) or set CHROMIUM_PATH" >&2
  exit 1
fi
echo "[chromium] installing Debian's chromium package (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq chromium >&2
echo "$browser"
