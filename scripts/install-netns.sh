#!/usr/bin/env bash
# Makes sure the namespace fault tests (internal/netns) have what they
# need: iproute2's ip (network namespaces, veth pairs, a bridge) and
# Debian's nftables (nft: the drop and reject rules of the cuts).
#
# Nothing to do when both are there. Otherwise, on a machine with apt-get,
# it installs the missing packages as root or through password-less sudo.
# Where it can not, it says so and exits 0: the namespace tests then skip
# with a message that says what is missing (they also skip when not run
# as root), and the rest of make test runs as before.
#
# Usage: scripts/install-netns.sh [--dry-run]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

dry_run=false
[[ "${1:-}" == "--dry-run" ]] && dry_run=true
say() { echo "install-netns: $*"; }

need=()
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v nft >/dev/null 2>&1 || need+=(nftables)
if ((${#need[@]} == 0)); then
	say "ip and nft are installed; nothing to do"
	exit 0
fi

how_to() {
	say "${need[*]} missing and not installable here (needs apt-get, and root or" \
		"password-less sudo); the namespace tests will skip and say so" >&2
	exit 0
}

apt_install "${need[@]}"
