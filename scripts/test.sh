#!/usr/bin/env bash
# make test's runs: the race suite (every package but internal/faulttest,
# with -race) and the fault suite (internal/faulttest, without it: see the
# Makefile), side by side. The fault suite spends most of its six minutes
# waiting out session timeouts on ensembles of its own, so it runs beside
# the race suite instead of after it; its output is printed when the race
# suite is done. The exit status is non-zero if either failed.
#
# Usage: scripts/test.sh PACKAGE... (the race suite's packages)
set -uo pipefail
GO=${GO:-go}
TEST_TIMEOUT=${TEST_TIMEOUT:-14m}

log=$(mktemp "${TMPDIR:-/tmp}/zklocks-faulttest.XXXXXX")
"$GO" test -count=1 -timeout "$TEST_TIMEOUT" ./internal/faulttest/ >"$log" 2>&1 &
fault=$!
# An interrupted run stops the fault suite too, and leaves no log behind.
trap 'kill "$fault" 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 130' INT TERM

echo "scripts/test.sh: internal/faulttest runs beside the race suite; its output follows it"
"$GO" test -race -count=1 -timeout "$TEST_TIMEOUT" "$@"
race=$?

echo "scripts/test.sh: waiting for internal/faulttest"
wait "$fault"
faults=$?
cat "$log"

if [ "$race" -ne 0 ] || [ "$faults" -ne 0 ]; then
	echo "scripts/test.sh: FAIL (race suite exit $race, fault suite exit $faults)"
	exit 1
fi
