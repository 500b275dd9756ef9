#!/usr/bin/env bash
# Makes sure the tests and the benchmark have a ZooKeeper to run against.
#
# Nothing to do when ZK_SERVERS names an ensemble, ZOOKEEPER_HOME points at
# an installation, or the Debian/Ubuntu package is installed (with a java
# to run it). Otherwise, on a machine with apt-get, it installs the
# `zookeeper` package (and a headless JRE when java is missing), as root or
# through password-less sudo. Anywhere else it says how to get ZooKeeper
# and fails.
#
# Usage: scripts/install-zookeeper.sh [--dry-run]
#   --dry-run  print the install commands instead of running them
# ZKLOCKS_ZK_JAR overrides the jar looked for (default
# /usr/share/java/zookeeper.jar), which lets you try the install path.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

dry_run=false
[[ "${1:-}" == "--dry-run" ]] && dry_run=true

zk_jar="${ZKLOCKS_ZK_JAR:-/usr/share/java/zookeeper.jar}"
say() { echo "install-zookeeper: $*"; }

how_to() {
	cat >&2 <<'MSG'
install-zookeeper: no ZooKeeper found, and this machine can not install one
(it needs apt-get, and root or password-less sudo). Any one of these works:
  - sudo apt-get install zookeeper        (Debian/Ubuntu; a JRE comes with it)
  - export ZOOKEEPER_HOME=/path/to/apache-zookeeper-3.8.x-bin   (or a Homebrew
    install: ZOOKEEPER_HOME=$(brew --prefix zookeeper)/libexec)
  - docker compose up -d
    export ZK_SERVERS=127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183
MSG
	exit 1
}

if [[ -n "${ZK_SERVERS:-}" ]]; then
	say "ZK_SERVERS is set ($ZK_SERVERS): using that ensemble, installing nothing"
	exit 0
fi
if [[ -n "${ZOOKEEPER_HOME:-}" ]]; then
	say "ZOOKEEPER_HOME is set ($ZOOKEEPER_HOME): using that installation, installing nothing"
	exit 0
fi

have_java() { [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]] || command -v java >/dev/null 2>&1; }

need=()
[[ -f "$zk_jar" ]] || need+=(zookeeper)
have_java || need+=(default-jre-headless)
if ((${#need[@]} == 0)); then
	say "ZooKeeper is installed ($zk_jar); nothing to do"
	exit 0
fi

say "installing ${need[*]} with apt-get"
apt_install "${need[@]}"
$dry_run && exit 0

if [[ ! -f "$zk_jar" ]]; then
	say "the zookeeper package did not provide $zk_jar" >&2
	exit 1
fi
have_java || {
	say "java is still missing after the install" >&2
	exit 1
}
say "ZooKeeper installed ($zk_jar)"
