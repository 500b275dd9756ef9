#!/usr/bin/env bash
# Makes sure the rival lock servers of the comparison (internal/rivals)
# are installed: Debian's redis-server (one Redis, and five for Redlock),
# etcd-server (a three-member etcd cluster) and postgresql (advisory
# locks), plus libfaketime (Debian's faketime), under which one Redis can
# run with its clock offset.
#
# The project starts its own servers, each on free loopback ports with
# its own data directory, and never uses the system services. Installing
# these packages would normally start those services on the default ports
# (6379, 2379, 5432), where they would sit unused and could hide a
# mistake that talks to the wrong server. So the install runs behind a
# policy-rc.d that exits 101 ("action forbidden"), which invoke-rc.d and
# deb-systemd-invoke honour; an existing policy-rc.d (Docker images ship
# one) is kept and put back afterwards. The services stay enabled for the
# next boot: disable them yourself if the machine is not a throwaway one.
#
# Nothing to do when all are there. Otherwise, on a machine with apt-get,
# it installs the missing packages as root or through password-less sudo;
# anywhere else it says how to get them and fails.
#
# Usage: scripts/install-rivals.sh [--dry-run]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

dry_run=false
[[ "${1:-}" == "--dry-run" ]] && dry_run=true
say() { echo "install-rivals: $*"; }

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || need+=(postgresql)
compgen -G "/usr/lib/*/faketime/libfaketime.so.1" >/dev/null || need+=(faketime)
if ((${#need[@]} == 0)); then
	say "redis-server, etcd, postgres and libfaketime are installed; nothing to do"
	exit 0
fi

how_to() {
	cat >&2 <<MSG
install-rivals: ${need[*]} missing, and this machine can not install them
(it needs apt-get, and root or password-less sudo). On Debian or Ubuntu:
  sudo apt-get install ${need[*]}
MSG
	exit 1
}

# as_root runs a command as root the way apt_install does (directly, or
# through password-less sudo); with --dry-run it prints it.
as_root() {
	local run=()
	$dry_run && run=(echo "+")
	if [[ "$(id -u)" -eq 0 ]]; then
		"${run[@]}" "$@"
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		"${run[@]}" sudo "$@"
	else
		how_to
	fi
}

policy=/usr/sbin/policy-rc.d
saved=""
restore_policy() {
	if [[ -n "$saved" ]]; then
		as_root mv -f "$saved" "$policy"
	else
		as_root rm -f "$policy"
	fi
}
if [[ -e "$policy.zklocks-saved" ]]; then
	# A run that was killed before it could put the original back left
	# it here; the policy-rc.d in place is that run's.
	saved="$policy.zklocks-saved"
elif [[ -e "$policy" ]]; then
	saved="$policy.zklocks-saved"
	as_root cp -p "$policy" "$saved"
fi
trap restore_policy EXIT
as_root sh -c "printf '#!/bin/sh\n# zklocks: no service starts while the rivals are installed\nexit 101\n' > $policy && chmod 755 $policy"

say "installing ${need[*]} with apt-get (no service is started)"
apt_install "${need[@]}"
$dry_run && exit 0
say "installed ${need[*]}"
