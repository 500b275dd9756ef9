#!/usr/bin/env bash
# Makes sure the interop tests (internal/interop) have the real clients
# they run beside this module's locks: Curator (Debian's
# libcurator-recipes-java, run with the JRE that ZooKeeper needs anyway,
# the driver compiled with javac) and kazoo (python3-kazoo, for Debian's
# /usr/bin/python3), and libfaketime (Debian's faketime), which the
# timeout variant's skewed-leader test preloads into one member's JVM.
#
# Nothing to do when all are there. Otherwise, on a machine with apt-get,
# it installs the missing packages as root or through password-less sudo;
# anywhere else it says how to get them and fails.
#
# Usage: scripts/install-peers.sh [--dry-run]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

dry_run=false
[[ "${1:-}" == "--dry-run" ]] && dry_run=true
say() { echo "install-peers: $*"; }

need=()
[[ -f /usr/share/java/curator-recipes.jar ]] || need+=(libcurator-recipes-java)
/usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1 || need+=(python3-kazoo)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
compgen -G "/usr/lib/*/faketime/libfaketimeMT.so.1" >/dev/null || need+=(faketime)
if ((${#need[@]} == 0)); then
	say "Curator, kazoo, javac and libfaketime are installed; nothing to do"
	exit 0
fi

how_to() {
	cat >&2 <<MSG
install-peers: ${need[*]} missing, and this machine can not install them
(it needs apt-get, and root or password-less sudo). On Debian or Ubuntu:
  sudo apt-get install ${need[*]}
MSG
	exit 1
}

say "installing ${need[*]} with apt-get"
apt_install "${need[@]}"
$dry_run && exit 0
say "installed ${need[*]}"
