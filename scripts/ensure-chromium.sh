#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed at /usr/bin/chromium for the headless browser test of
# examples/web (driven by playwright-core, which brings no browser of its own). Installs the
# `chromium` package when missing and running as root; otherwise stops with the command to run.
# Prints the path of the browser on standard output.
set -euo pipefail

CHROMIUM="${QES_CHROMIUM_PATH:-/usr/bin/chromium}"
say() { printf 'ensure-chromium: %s\n' "$*" >&2; }

if [ -x "$CHROMIUM" ]; then
  echo "$CHROMIUM"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "Chromium is missing at $CHROMIUM."
  printf '\nRun:\n  sudo apt-get update && sudo apt-get install -y chromium\n' >&2
  exit 1
fi
say "installing chromium from Debian packages"
export DEBIAN_FRONTEND=noninteractive
# another apt-get may hold the lock for a while (e.g. ensure-services.sh): wait for it
apt-get -o DPkg::Lock::Timeout=300 update -qq
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium >/dev/null
if [ ! -x "$CHROMIUM" ]; then
  say "chromium was installed but $CHROMIUM is not there"
  exit 1
fi
echo "$CHROMIUM"
