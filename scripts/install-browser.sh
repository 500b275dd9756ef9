#!/usr/bin/env bash
# Makes sure the browser test of zklocks web (cmd/zklocks/web_browser_test.go)
# has a headless browser to drive: Debian's chromium, at /usr/bin/chromium.
#
# Nothing to do when it is there. Otherwise, on a machine with apt-get, it
# installs the package as root or through password-less sudo; anywhere else
# it says how to get it and fails.
#
# Usage: scripts/install-browser.sh [--dry-run]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

dry_run=false
[[ "${1:-}" == "--dry-run" ]] && dry_run=true
say() { echo "install-browser: $*"; }

if [[ -x /usr/bin/chromium ]]; then
	say "chromium is installed; nothing to do"
	exit 0
fi

how_to() {
	cat >&2 <<MSG
install-browser: chromium missing, and this machine can not install it
(it needs apt-get, and root or password-less sudo). On Debian or Ubuntu:
  sudo apt-get install chromium
MSG
	exit 1
}

say "installing chromium with apt-get"
apt_install chromium
