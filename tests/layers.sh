# layers.sh: sourced by the layer checks (tests/unit/*/check_*layers.sh).
# A static library links even when it calls a layer above it, so the
# checks look at the built archives' symbols: a layer may not need a
# symbol that only a layer it must not depend on defines.
# The sourcing script sets NM, then calls check; it exits with $status.

defined() {
	"$NM" -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' |
		sort -u
}

undefined() {
	"$NM" -u "$1" 2>/dev/null | awk '{ print $NF }' | sort -u
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# check LAYER.a "what it may not use" FORBIDDEN.a...
check() {
	lib=$1
	what=$2
	shift 2
	undefined "$lib" >"$tmp/needs"
	defined "$@" >"$tmp/above"
	bad=$(comm -12 "$tmp/needs" "$tmp/above")
	if [ -n "$bad" ]; then
		echo "layering: $(basename "$lib") uses $what:" $bad
		status=1
	else
		echo "layering: $(basename "$lib") uses no $what"
	fi
}
