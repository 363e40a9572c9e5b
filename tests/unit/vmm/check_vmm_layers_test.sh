#!/bin/sh
# check_vmm_layers_test.sh: check_vmm_layers.sh must fail when a layer of
# the VMM calls up. Each case copies a built archive, adds one synthetic
# object that a real upward call (or pv code compiled into the core) would
# leave there, and expects check_vmm_layers.sh to refuse it and to name
# the symbol. The untouched archives must pass.
#
# Usage: check_vmm_layers_test.sh CC AR NM core.a pv.a ctl.a
set -eu
CC=$1 AR=$2 NM=$3 CORE=$4 PV=$5 CTL=$6
CHECK=$(dirname "$0")/check_vmm_layers.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# refused CASE LAYER SYMBOL: the check refused the archive and named SYMBOL.
refused() {
	if "$CHECK" "$NM" "$@" >"$tmp/out" 2>&1; then
		echo "FAIL: $CASE passed the layer check"
		fail=1
	elif ! grep -q "$SYMBOL" "$tmp/out"; then
		echo "FAIL: the refusal of $CASE does not name $SYMBOL:"
		cat "$tmp/out"
		fail=1
	else
		echo "ok: $CASE is refused"
	fi
}

# add ARCHIVE NAME C-SOURCE: a copy of ARCHIVE with one more object.
add() {
	printf '%s\n' "$3" >"$tmp/$2.c"
	"$CC" -c -o "$tmp/$2.o" "$tmp/$2.c"
	cp "$1" "$tmp/$2.a"
	"$AR" q "$tmp/$2.a" "$tmp/$2.o"
}

if ! "$CHECK" "$NM" "$CORE" "$PV" "$CTL" >"$tmp/out" 2>&1; then
	echo "FAIL: the built archives do not pass:"
	cat "$tmp/out"
	fail=1
fi

# The run loop calling pv's accounting by name, not through its hook.
add "$CORE" core_pv 'void vmm_pv_after_run(void *, unsigned long, unsigned long, _Bool);
void upward_pv(void *v) { vmm_pv_after_run(v, 0, 0, 0); }'
CASE="the core calling vmm_pv_after_run" SYMBOL=vmm_pv_after_run
refused "$tmp/core_pv.a" "$PV" "$CTL"

# The core completing operators' reads itself.
add "$CORE" core_ctl 'void vmm_control_vcpu_accounted(void *);
void upward_ctl(void *v) { vmm_control_vcpu_accounted(v); }'
CASE="the core calling vmm_control_vcpu_accounted"
SYMBOL=vmm_control_vcpu_accounted
refused "$tmp/core_ctl.a" "$PV" "$CTL"

# pv code compiled into the core (as when pv/ added its sources to it).
add "$CORE" core_own 'int vmm_pv_stray(void) { return 0; }'
CASE="the core defining vmm_pv_stray" SYMBOL=vmm_pv_stray
refused "$tmp/core_own.a" "$PV" "$CTL"

# pv waking the control thread by name, not through its callback.
add "$PV" pv_ctl 'void vmm_control_notify(void *, const void *);
void upward_notify(void *vm) { vmm_control_notify(vm, 0); }'
CASE="pv calling vmm_control_notify" SYMBOL=vmm_control_notify
refused "$CORE" "$tmp/pv_ctl.a" "$CTL"
exit $fail
