#!/bin/bash
# For hosts without /dev/kvm (e.g. a machine that is itself a PVM guest):
# scripts/test.sh runs the guest labels in it (tests/rig-subset.txt),
# and developers run any command.
# Usage: scripts/nested-kvm/run.sh 'COMMAND'   (runs COMMAND as root inside an
# L1 Linux VM under QEMU TCG with nested SVM, chrooted into this host's /
# (shared over 9p), with /dev/kvm), e.g. from build/:
#   ../scripts/nested-kvm/run.sh './tests/kvm/test_kvm_boot --verbose'
# Needs Debian's qemu-system-x86, linux-image-amd64 and busybox-static
# (installed when missing). State lives in $VPMU_NESTED_DIR
# (default /var/tmp/vpmu-nested-kvm).
# The command starts in the caller's current directory. Exit status = command's exit status
# (125 = rig failure: L1 never reported a status).
# Env knobs: RIG_TIMEOUT (s, default 1800), RIG_MEM (default 4G), RIG_SMP (default 2),
#   RIG_TCG_THREAD (multi|single, default multi), RIG_KVER (L1 kernel, default newest /lib/modules/*-amd64), RIG_CPU (default "EPYC,+svm,+npt"; "max" oopsed L1 6.12 in test_kvm_sdk), RIG_AMDOPTS (kvm-amd module params, comma-separated, e.g. "npt=0"),
#   RIG_CACHE (9p cache mode, default loose), RIG_KEEP=1 (keep run dir), RIG_QEMU_EXTRA,
#   RIG_NOLOCK=1 (do not wait for another rig run; by default runs take turns).
set -uo pipefail
SRC=$(cd "$(dirname "$0")" && pwd)
RIG=${VPMU_NESTED_DIR:-/var/tmp/vpmu-nested-kvm}
mkdir -p "$RIG"
for p in qemu-system-x86 linux-image-amd64 busybox-static; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p"; } >&2 || exit 125
done
[ $# -ge 1 ] || { echo "usage: $0 'COMMAND'" >&2; exit 2; }
KVER=${RIG_KVER:-$(ls /lib/modules | grep -- '-amd64$' | sort -V | tail -1)}
INITRD=$RIG/initramfs-$KVER.cpio.gz
if [ ! -f "$INITRD" ] || [ "$SRC/l1-init" -nt "$INITRD" ] || [ "$SRC/build-initramfs.sh" -nt "$INITRD" ]; then
  KVER=$KVER RIG=$RIG "$SRC/build-initramfs.sh" >&2 || exit 125
fi
mkdir -p $RIG/runs
# One rig at a time: two TCG rigs on a shared 2-core host slow each other into
# timeouts. RIG_NOLOCK=1 skips the wait.
if [ "${RIG_NOLOCK:-0}" != 1 ]; then
  exec 9>"$RIG/lock"
  flock -n 9 || { echo "[rig] waiting for another rig run to finish ($RIG/lock)" >&2; flock 9; }
fi
RUN=$(mktemp -d $RIG/runs/run.XXXXXX)
{
  echo "cd $(printf %q "$PWD") 2>/dev/null || cd /"
  printf '%s\n' "$*"
} > "$RUN/cmd.sh"
APPEND="console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off rig.run=$RUN rig.cache=${RIG_CACHE:-loose}"
[ -n "${RIG_AMDOPTS:-}" ] && APPEND="$APPEND rig.amdopts=$RIG_AMDOPTS"
START=$(date +%s.%N)
timeout --foreground -k 10 "${RIG_TIMEOUT:-1800}" \
  qemu-system-x86_64 -accel tcg,thread=${RIG_TCG_THREAD:-multi} -cpu "${RIG_CPU:-EPYC,+svm,+npt}" \
    -m "${RIG_MEM:-4G}" -smp "${RIG_SMP:-2}" -machine q35 \
    -kernel /boot/vmlinuz-$KVER -initrd "$INITRD" -append "$APPEND" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,multidevs=remap \
    -nographic -serial stdio -monitor none -no-reboot -nodefaults -display none \
    ${RIG_QEMU_EXTRA:-} </dev/null | sed -u -e 's/\x1bc//g; s/\x1b\[[0-9;?]*[a-zA-Z]//g' | tee "$RUN/console.log"
QRC=${PIPESTATUS[0]}
END=$(date +%s.%N)
if [ -f "$RUN/status" ]; then RC=$(cat "$RUN/status"); else
  echo "[rig] no status from L1 (qemu rc=$QRC; 124 = RIG_TIMEOUT hit); console kept in $RUN/console.log" >&2
  grep -qE 'Oops|Kernel panic' "$RUN/console.log" && echo "[rig] the L1 kernel crashed. Under multi-threaded TCG this is usually a QEMU race on kernel self-patching; retry, or set RIG_TCG_THREAD=single (stable, but much slower)" >&2
  RC=125; RIG_KEEP=1; fi
echo "[rig] total wall time $(echo "$END $START" | awk '{printf "%.1f", $1-$2}')s, exit $RC" >&2
[ "${RIG_KEEP:-0}" = 1 ] || rm -rf "$RUN"
exit "$RC"
