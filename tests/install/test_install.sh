#!/bin/bash
# SPDX-License-Identifier: MIT
# test_install.sh BUILD_DIR HELLO_ELF MAN(0|1): `cmake --install BUILD_DIR
# --prefix TMP` gives a vpmu that works on its own: the programs, the
# run-time formats where the installed programs look for them, the systemd
# unit naming TMP/bin/vpmu, the guest SDK and (MAN=1, help2man found at
# configure time) the man pages; then TMP/bin/vpmu boots HELLO_ELF from
# another folder, loading TMP's lastn.so and nothing of the build tree,
# which is hidden under an empty tmpfs where a mount namespace can be had
# (label kvm; skips, status 77, without /dev/kvm unless VPMU_REQUIRE_KVM=1).
set -u
B=$(cd "$1" && pwd)
HELLO=$2
MAN=$3
# shellcheck source=../require_kvm.sh
. "$(dirname "$0")/../require_kvm.sh"

T=$(mktemp -d /tmp/vpmu-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
P=$T/prefix
fail() {
	echo "FAIL: $*"
	exit 1
}

cmake --install "$B" --prefix "$P" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; fail "cmake --install"; }
FMT=$(find "$(realpath "$P")" -path '*/vpmu/formats/lastn.so')
UNIT=$P/lib/systemd/system/vpmu-serve.service
for f in "$P/bin/vpmu" "$P/bin/vpmu-vmm" "$FMT" "$UNIT" \
	"$P/include/pvpmu/abi.h" "$P/share/doc/vpmu/OPERATORS.md"; do
	[ -n "$f" ] && [ -e "$f" ] || fail "not installed: ${f:-lastn.so}"
done
grep -qx "ExecStart=$P/bin/vpmu serve --listen 127.0.0.1:9464 --auth-token-file /etc/vpmu/serve.token" "$UNIT" ||
	fail "$UNIT: ExecStart is not $P/bin/vpmu: $(grep ExecStart "$UNIT")"
if [ "$MAN" = 1 ]; then
	# A word of each page's usage (man escapes the dashes of options).
	for page in vpmu:snapshot vpmu-run:format vpmu-serve:listen; do
		grep -q "${page#*:}" "$P/share/man/man1/${page%%:*}.1" ||
			fail "man page ${page%%:*}.1 lacks ${page#*:}"
	done
fi
echo "installed: $(cd "$P" && find . -type f | sort | tr '\n' ' ')"

# From the install only: its own folder as cwd, the guest copied there.
cp "$HELLO" "$T/hello.elf"
cd "$T" || fail "cd $T"
export VPMU_RUNTIME_DIR=$T/run
run=("$P/bin/vpmu" run "$T/hello.elf" --name install-hello)
if unshare --mount true 2>/dev/null; then
	echo "build tree $B hidden under an empty tmpfs"
	unshare --mount sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' \
		sh "$B" "${run[@]}" >"$T/out" 2>"$T/err" </dev/null
else
	echo "NOTE: no mount namespace here: the build tree stays visible;" \
		"the formats' origin below is what shows it was not used"
	"${run[@]}" >"$T/out" 2>"$T/err" </dev/null
fi
status=$?
echo "status $status; stdout:"
cat "$T/out"
echo "--- stderr:"
cat "$T/err"
[ "$status" = 0 ] || fail "exit status $status"
grep -q "hello from vcpu 0" "$T/out" || fail "no hello on the console"
grep -q "sampling format 'last-n' loaded from $FMT" "$T/err" ||
	fail "lastn.so not loaded from $FMT"
! grep -q "$B" "$T/err" || fail "something was loaded from $B"
"$P/bin/vpmu" events >"$T/events" 2>&1 || fail "vpmu events: $(cat "$T/events")"
grep -q lastn "$T/events" || fail "vpmu events does not list lastn"
echo "PASS"
