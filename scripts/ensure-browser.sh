#!/usr/bin/env bash
# Makes sure Debian's headless Chromium is at /usr/bin/chromium for the browser tests.
# Never downloads a browser build of its own (no `playwright install`): Debian's package only.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null; then
  echo "ensure-browser: /usr/bin/chromium is missing and we are not root" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
test -x /usr/bin/chromium
