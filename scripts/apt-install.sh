# Sourced by the install scripts: apt_install installs Debian packages as
# root or through password-less sudo, or calls how_to (the caller's: it
# says how to get them, and exits) when it can do neither. With dry_run
# set to true it prints the commands instead.
apt_install() {
	command -v apt-get >/dev/null 2>&1 || how_to
	local sudo=()
	if [[ "$(id -u)" -ne 0 ]]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			sudo=(sudo)
		else
			how_to
		fi
	fi
	local run=()
	${dry_run:-false} && run=(echo "+")
	"${run[@]}" ${sudo[@]+"${sudo[@]}"} apt-get update -q
	"${run[@]}" ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "$@"
}
