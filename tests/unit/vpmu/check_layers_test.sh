#!/bin/sh
# check_layers_test.sh: check_layers.sh must fail when a mechanism calls up.
# Each case copies the built mechanisms' archive, adds one synthetic object
# that a real upward call would leave there (a reference to a command, to
# the handle lookup, or to the domain lock), and expects check_layers.sh to
# refuse it and to name the symbol. The untouched archives must pass.
#
# Usage: check_layers_test.sh CC AR NM formats.a backends.a mech.a core.a
#        arch.a vpmu.a
set -eu
CC=$1 AR=$2 NM=$3 FORMATS=$4 BACKENDS=$5 MECH=$6 CORE=$7 ARCH=$8 TOP=$9
CHECK=$(dirname "$0")/check_layers.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

run() {
	"$CHECK" "$NM" "$FORMATS" "$BACKENDS" "$1" "$CORE" "$ARCH" "$TOP" \
		>"$tmp/out" 2>&1
}

# expect_refused NAME SYMBOL: a mechanism that calls SYMBOL is refused.
expect_refused() {
	printf 'int %s(void);\nint upward_%s(void) { return %s(); }\n' \
		"$2" "$1" "$2" >"$tmp/$1.c"
	"$CC" -c -o "$tmp/$1.o" "$tmp/$1.c"
	cp "$MECH" "$tmp/$1.a"
	"$AR" q "$tmp/$1.a" "$tmp/$1.o"
	if run "$tmp/$1.a"; then
		echo "FAIL: a mechanism calling $2 passed the layer check"
		fail=1
	elif ! grep -q "$2" "$tmp/out"; then
		echo "FAIL: the refusal of $2 does not name it:"
		cat "$tmp/out"
		fail=1
	else
		echo "ok: a mechanism calling $2 is refused"
	fi
}

if ! run "$MECH"; then
	echo "FAIL: the built archives do not pass:"
	cat "$tmp/out"
	fail=1
fi
expect_refused command vpmu_ctx_load
expect_refused lookup vpmu_ctx_lookup
expect_refused vector vpmu_ctx_vec_run
expect_refused lock pthread_mutex_lock
exit $fail
