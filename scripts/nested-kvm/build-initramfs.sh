#!/bin/bash
# Builds $RIG/initramfs-$KVER.cpio.gz for the nested-KVM L1 guest (Debian
# kernel + busybox-static); called by run.sh.
# Usage: [KVER=6.12.117+deb12-amd64] build-initramfs.sh   (default: newest /lib/modules/*-amd64)
set -euo pipefail
KVER=${KVER:-$(ls /lib/modules | grep -- '-amd64$' | sort -V | tail -1)}
RIG=${RIG:?run.sh sets RIG}
SRC=$(cd "$(dirname "$0")" && pwd)
STAGE=$RIG/initramfs-root-$KVER
OUT=$RIG/initramfs-$KVER.cpio.gz
rm -rf "$STAGE"; mkdir -p "$STAGE"/{bin,sbin,proc,sys,dev,mnt/host,lib/modules,tmp}
cp /bin/busybox "$STAGE/bin/busybox"
for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$STAGE/bin/$a"; done
# Wanted modules; their dependencies are pulled in from modules.dep (loaded deps-first).
MODS="virtio_pci 9pnet_virtio 9p kvm-amd"
MD=/lib/modules/$KVER
: > "$STAGE/lib/modules/order"
modpath() { grep -E "(^|/)${1}\.ko(\.xz|\.zst)?:" "$MD/modules.dep" | head -1 | cut -d: -f1 || true; }
add_mod() { # $1 = path relative to $MD
  local f=$1 m; m=$(basename "$f"); m=${m%%.ko*}
  grep -qx "$m" "$STAGE/lib/modules/order" && return 0
  case "$f" in
    *.xz) xz -dc "$MD/$f" > "$STAGE/lib/modules/$m.ko";;
    *.zst) zstd -dcq "$MD/$f" > "$STAGE/lib/modules/$m.ko";;
    *) cp "$MD/$f" "$STAGE/lib/modules/$m.ko";;
  esac
  echo "$m" >> "$STAGE/lib/modules/order"
}
for m in $MODS; do
  f=$(modpath "$m")
  if [ -z "$f" ]; then
    grep -qE "(^|/)$(echo "$m" | sed 's/[-_]/[-_]/g')\.ko$" "$MD/modules.builtin" && { echo "$m is built in"; continue; }
    echo "module $m not found" >&2; exit 1
  fi
  deps=$(grep -E "^$f:" "$MD/modules.dep" | cut -d: -f2)
  for d in $(echo $deps | tr ' ' '\n' | tac); do add_mod "$d"; done
  add_mod "$f"
done
cp "$SRC/l1-init" "$STAGE/init"; chmod +x "$STAGE/init"
(cd "$STAGE" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT"
echo "built $OUT"
