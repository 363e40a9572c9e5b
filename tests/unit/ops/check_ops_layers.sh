#!/bin/sh
# check_ops_layers.sh: the operator side's layering, checked on the built
# archives (a static library links even when it calls a layer above it,
# so this looks at the symbols). From the bottom:
#   vmm_proto   the control protocol, shared with the VM's control server
#   ops_client  the client library
#   ops_pprof   pprof profiles
#   ops_cmd, ops_serve  the commands and the daemon, which know each other
#               not; and the VMM (its core and the modules on it) knows
#               none of them.
#
# Usage: check_ops_layers.sh NM proto.a client.a pprof.a cmd.a serve.a
#        core.a [module.a...]
set -eu
NM=$1 PROTO=$2 CLIENT=$3 PPROF=$4 CMD=$5 SERVE=$6 CORE=$7
shift 7

# defined, undefined, check and $status.
. "$(dirname "$0")/../../layers.sh"

check "$PROTO" "operator code or VMM" "$CLIENT" "$PPROF" "$CMD" "$SERVE" \
	"$CORE" "$@"
check "$CLIENT" "pprof, command, serve or VMM code" "$PPROF" "$CMD" \
	"$SERVE" "$CORE" "$@"
check "$PPROF" "command or serve code" "$CMD" "$SERVE"
check "$CMD" "serve code" "$SERVE"
check "$SERVE" "command code" "$CMD"
check "$CORE" "operator code" "$CLIENT" "$PPROF" "$CMD" "$SERVE"
for module in "$@"; do
	check "$module" "operator code" "$CLIENT" "$PPROF" "$CMD" "$SERVE"
done
exit $status
