#!/usr/bin/env bash
# build-linux.sh: build the vpmu Linux guest: a small x86-64 kernel from
# Debian's linux-source-6.1 (config fragment and patches in
# guest/linux-kernel/), the nolibc test init (tests/linux/init/), an
# uncompressed newc initrd holding it, and an ext4 root file system with a
# shell and Linux perf (guest/linux-rootfs/).
#
# Cached: the kernel's key is the sha256 of the source package version, the
# fragment and every patch. A kernel lives in
# ${VPMU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vpmu}/linux-<key>/ and is
# copied to ${BUILD_DIR:-build}/linux/ (vmlinux, bzImage, kernel.version);
# the init (tests/linux/init, a second or so) and initrd.cpio are rebuilt
# there on every run against the cached tree's nolibc and headers, so a
# change to the init or to pvpmu/abi.h never rebuilds the kernel. Uses
# ccache when it is installed.
#
# Usage: scripts/build-linux.sh        (no options)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
START=$(date +%s)

SRC_PKG=linux-source-6.1
SRC_TAR=/usr/src/linux-source-6.1.tar.xz
SRC_TOP=linux-source-6.1
# The inputs, as paths in the repository. The build reads them from a
# snapshot taken before the key is computed (see use_inputs), so a cache
# entry always holds what its key says even if the tree changes meanwhile.
# The kernel's inputs (the cache key); the init is rebuilt on every run
# (a few files, about a second) against the cached kernel tree. They live
# in KERNEL_IN; the key and the snapshot name them under KEY_IN, the
# folder they were first kept in, so that moving them did not change the
# key of any cached kernel.
KERNEL_IN=guest/linux-kernel
KEY_IN=guest-driver/linux-kernel
INPUT_FIXED=(
	config.fragment
)
IN=""
TMP_IN=""
OUT_DIR=${BUILD_DIR:-build}/linux
CACHE_ROOT=${VPMU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vpmu}
JOBS=$(nproc)
PROGRESS_SECS=30

PACKAGES=(
	"$SRC_PKG" build-essential flex bison bc libelf-dev libssl-dev
	cpio xz-utils lz4 musl-tools cmake pkg-config
	busybox-static linux-perf e2fsprogs
)

log() {
	echo "build-linux: $*"
}

die() {
	echo "build-linux: error: $*" >&2
	exit 1
}

elapsed() {
	echo "$(($(date +%s) - START)) s"
}

install_packages() {
	local missing=() p SUDO=""

	for p in "${PACKAGES[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return
	log "installing ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		SUDO="sudo"
	fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		--no-install-recommends "${missing[@]}"
}

# Every input file under the inputs folder $1, relative to it, patches in
# name order.
input_files() {
	(
		cd "$1"
		printf '%s\n' "${INPUT_FIXED[@]}"
		find patches -maxdepth 1 -name '*.patch' -print | LC_ALL=C sort
	)
}

snapshot_inputs() {
	local to=$1/$KEY_IN f

	for f in $(input_files "$ROOT/$KERNEL_IN"); do
		mkdir -p "$to/$(dirname "$f")"
		cp "$ROOT/$KERNEL_IN/$f" "$to/$f"
	done
}

# Read every input from the snapshot in $1.
use_inputs() {
	IN=$1
	FRAGMENT=$IN/$KEY_IN/config.fragment
}

patch_list() {
	input_files "$IN/$KEY_IN" | grep '\.patch$' | sed "s|^|$IN/$KEY_IN/|"
}

init_sources() {
	find "$ROOT/tests/linux/init" -name '*.c' -print | LC_ALL=C sort
}

# The first 16 hex digits of the sha256 over the package version and the
# name and content of every input.
cache_key() {
	{
		dpkg-query -W -f='${Version}\n' "$SRC_PKG"
		local f
		for f in $(input_files "$IN/$KEY_IN"); do
			echo "$KEY_IN/$f"
			sha256sum <"$IN/$KEY_IN/$f"
		done
	} | sha256sum | cut -c1-16
}

# Unpack and patch into src.tmp, then rename: a half-done tree is never used.
prepare_source() {
	local dir=$1 p

	[ -d "$dir/src" ] && return
	rm -rf "$dir/src.tmp"
	mkdir -p "$dir/src.tmp"
	log "extracting $SRC_TAR"
	tar -xf "$SRC_TAR" -C "$dir/src.tmp" --strip-components=1 \
		"$SRC_TOP"
	for p in $(patch_list); do
		log "applying ${p#"$IN"/}"
		if ! patch -p1 --fuzz=0 --batch --forward -s \
			-d "$dir/src.tmp" <"$p"; then
			die "patch ${p#"$IN"/} does not apply to $SRC_PKG"
		fi
	done
	mv "$dir/src.tmp" "$dir/src"
}

# Every line of the fragment must hold in the final .config.
verify_config() {
	local config=$1 line opt dropped=()

	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF "$line" "$config" || dropped+=("$line")
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			if grep -q "^$opt=" "$config"; then
				dropped+=("$line")
			fi
			;;
		esac
	done <"$FRAGMENT"
	if [ ${#dropped[@]} -gt 0 ]; then
		printf 'build-linux:   not as asked: %s\n' "${dropped[@]}" >&2
		die "${#dropped[@]} option(s) of ${FRAGMENT#"$IN"/} were dropped"
	fi
}

configure_kernel() {
	local src=$1

	[ -f "$src/.vpmu-configured" ] && return
	log "make tinyconfig + ${FRAGMENT#"$IN"/}"
	if ! (
		cd "$src"
		make -s tinyconfig
		scripts/kconfig/merge_config.sh -m .config "$FRAGMENT"
		make -s olddefconfig
	) >"$src/../config.log" 2>&1; then
		tail -n 20 "$src/../config.log" >&2
		die "configuring the kernel failed (log: $src/../config.log)"
	fi
	verify_config "$src/.config"
	touch "$src/.vpmu-configured"
}

# make in the background, a progress line every PROGRESS_SECS seconds.
make_with_progress() {
	local src=$1 logf=$2 pid n
	shift 2

	make -C "$src" -j"$JOBS" "$@" >"$logf" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep "$PROGRESS_SECS" &
		wait $! || true
		if kill -0 "$pid" 2>/dev/null; then
			n=$(grep -c '^  CC ' "$logf" || true)
			log "... $n files compiled, $(elapsed)"
		fi
	done
	if ! wait "$pid"; then
		tail -n 40 "$logf" >&2
		die "make $* failed (full log: $logf)"
	fi
}

build_kernel() {
	local dir=$1 src=$1/src cc=gcc

	[ -f "$dir/.vpmu-kernel" ] && return
	if command -v ccache >/dev/null; then
		cc="ccache gcc"
		export CCACHE_DIR=${CCACHE_DIR:-$CACHE_ROOT/ccache}
		export CCACHE_BASEDIR=$src
	fi
	log "make -j$JOBS vmlinux bzImage modules (cold build, 5-11 min on 2 cores)..."
	make_with_progress "$src" "$dir/make.log" CC="$cc" \
		KBUILD_BUILD_USER=vpmu KBUILD_BUILD_HOST=vpmu vmlinux bzImage modules
	log "make headers (uapi headers for the init)"
	make -s -C "$src" -j"$JOBS" headers >/dev/null
	make -s -C "$src" kernelrelease >"$dir/kernelrelease"
	touch "$dir/.vpmu-kernel"
}

# What the init knows of its kernel: entry_SYSCALL_64 (syscall-entry-fault)
# and the UTS version that proves it runs on that kernel.
kernel_build_h() {
	local src=$1 entry uts

	entry=$(awk '$3 == "entry_SYSCALL_64" { print $1 }' "$src/System.map")
	uts=$(sed -n 's/^#define UTS_VERSION //p' \
		"$src/include/generated/utsversion.h")
	if [ -z "$entry" ] || [ -z "$uts" ]; then
		die "entry_SYSCALL_64 or UTS_VERSION not found in $src"
	fi
	echo "/* Generated by scripts/build-linux.sh from $SRC_PKG. */"
	echo "#define KERNEL_ENTRY_SYSCALL_64 0x${entry}UL"
	echo "#define KERNEL_UTS_VERSION $uts"
}

# The init: nolibc from the cached kernel tree ($1/src), no C library at
# all, built into $2 from the working tree's sources.
build_init() {
	local src=$1/src out=$2 gccinc f objs=()

	gccinc=$(gcc -print-file-name=include)
	mkdir -p "$out/init.o"
	kernel_build_h "$src" >"$out/init.o/kernel_build.h"
	log "building the nolibc init"
	for f in $(init_sources); do
		gcc -std=gnu11 -O2 -Wall -Wextra -Werror -ffreestanding \
			-fno-stack-protector -fno-asynchronous-unwind-tables \
			-fno-pie -nostdinc -I "$ROOT/tests/linux/init/include" \
			-I "$out/init.o" -isystem "$gccinc" \
			-isystem "$src/usr/include" \
			-I "$src/tools/include/nolibc" -I "$ROOT/guest/sdk/include" \
			-include nolibc.h -c "$f" \
			-o "$out/init.o/$(basename "$f" .c).o"
		objs+=("$out/init.o/$(basename "$f" .c).o")
	done
	gcc -nostdlib -static -no-pie -o "$out/init" "${objs[@]}" -lgcc
}

# The paravirtual perfmon2 driver and SDK (vpmutest=pvpmu): pvpmu.ko built
# against the cached kernel; libpvpmu and its tools built with musl-gcc and
# installed into $2/sdk-root; the driver checks (tests/linux/pvpmu) built
# against that installed SDK through pkg-config, all static (the initrd has
# no C library), stripped (unpacking the initrd is emulated: ~11 s/MB).
build_pvpmu() {
	local src=$1/src out=$2 root=$2/sdk-root

	log "building pvpmu.ko and the musl SDK"
	"$ROOT/guest/linux/build-module.sh" "$src" "$out/pvpmu-mod" \
		>"$out/pvpmu-mod.log" 2>&1 ||
		{ cat "$out/pvpmu-mod.log" >&2; die "pvpmu.ko failed"; }
	strip --strip-debug -o "$out/pvpmu.ko" "$out/pvpmu-mod/pvpmu.ko"
	# A build tree configured from another source folder (the SDK moved,
	# or another checkout) is refused by cmake: start that one afresh.
	if [ -f "$out/sdk-musl/CMakeCache.txt" ] &&
		! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT/guest/sdk/linux" \
			"$out/sdk-musl/CMakeCache.txt"; then
		rm -rf "$out/sdk-musl" "$root"
	fi
	CC=musl-gcc cmake -S "$ROOT/guest/sdk/linux" -B "$out/sdk-musl" \
		-DCMAKE_BUILD_TYPE=Release -DPVPMU_STATIC_TOOLS=ON \
		-DCMAKE_INSTALL_PREFIX="$root" >/dev/null
	cmake --build "$out/sdk-musl" >/dev/null
	cmake --install "$out/sdk-musl" >/dev/null
	# shellcheck disable=SC2046
	musl-gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static \
		-o "$out/pvpmu-checks" "$ROOT/tests/linux/pvpmu/pvpmu_checks.c" \
		$(PKG_CONFIG_PATH="$root/lib/pkgconfig" pkg-config --static \
			--cflags --libs pvpmu)
	strip "$out/pvpmu-checks" "$root/bin/pfinfo" "$root/bin/pfstat" \
		"$root/bin/pffast" "$root/bin/pfrecord"
	# pfrecord's workload keeps its .symtab (the profile names functions).
	musl-gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -no-pie \
		-o "$out/pvpmu-hot" "$ROOT/tests/linux/pvpmu/hot.c"
	# The host-profile test's two programs: static non-PIE, and a PIE
	# linked against musl's shared libc (its loader, in the rootfs); with
	# frame pointers and DWARF (source lines in host profiles).
	musl-gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra \
		-Werror -static -no-pie -DSPIN_NAME=alpha \
		-o "$out/pvpmu-alpha" "$ROOT/tests/linux/pvpmu/spin.c"
	musl-gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra \
		-Werror -pie -fPIE -DSPIN_NAME=beta \
		-o "$out/pvpmu-beta" "$ROOT/tests/linux/pvpmu/spin.c"
}

# newc cpio with /dev/console (init's first fds), /dev, /proc, /init, and
# the pvpmu module, SDK tools and driver checks.
build_initrd() {
	local dir=$1 out=$2

	cat >"$out/initrd.list" <<-EOF
		dir /dev 0755 0 0
		nod /dev/console 0600 0 0 c 5 1
		dir /proc 0755 0 0
		file /init $out/init 0755 0 0
		dir /lib 0755 0 0
		file /lib/pvpmu.ko $out/pvpmu.ko 0644 0 0
		dir /bin 0755 0 0
		file /bin/pfinfo $out/sdk-root/bin/pfinfo 0755 0 0
		file /bin/pfstat $out/sdk-root/bin/pfstat 0755 0 0
		file /bin/pffast $out/sdk-root/bin/pffast 0755 0 0
		file /bin/pfrecord $out/sdk-root/bin/pfrecord 0755 0 0
		file /bin/pvpmu-hot $out/pvpmu-hot 0755 0 0
		file /bin/pvpmu-checks $out/pvpmu-checks 0755 0 0
	EOF
	"$dir/src/usr/gen_init_cpio" "$out/initrd.list" >"$out/initrd.cpio"
}

# The root file system of `vpmu run --disk build/linux/rootfs.ext4`: ext4
# made by mke2fs -d (no root needed) from a staging folder holding busybox
# (Debian's busybox-static), Linux perf (linux-perf, the guest kernel's
# version) with exactly the libraries ldd names, pvpmu.ko, the SDK tools,
# the pfrecord workload and guest/linux-rootfs/init as /sbin/init. Made
# anew on every run (seconds); 256 MiB free for the user's files.
build_rootfs() {
	local out=$1 st=$1/rootfs.d perf lib applet kib

	log "building the root file system (busybox, perf, pvpmu.ko, SDK)"
	rm -rf "$st"
	mkdir -p "$st"/{bin,sbin,usr/bin,usr/sbin,lib/modules,etc,dev,proc} \
		"$st"/{sys,tmp,mnt,root}
	chmod 1777 "$st/tmp"
	chmod 0700 "$st/root"
	cp /bin/busybox "$st/bin/busybox"
	for applet in $(/bin/busybox --list-full); do
		# /sbin/init is ours; a path busybox has twice is linked once.
		[ "$applet" = sbin/init ] || [ -e "$st/$applet" ] ||
			ln -s /bin/busybox "$st/$applet"
	done
	install -m 0755 "$ROOT/guest/linux-rootfs/init" "$st/sbin/init"
	musl-gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static \
		-I "$ROOT/guest/sdk/include" -o "$st/sbin/vpmu-exit" \
		"$ROOT/guest/linux-rootfs/vpmu-exit.c"
	strip "$st/sbin/vpmu-exit"
	perf=$(readlink -f /usr/bin/perf)
	cp "$perf" "$st/usr/bin/perf"
	for lib in $(ldd "$perf" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
			$1 ~ /^\// { print $1 }'); do
		mkdir -p "$st$(dirname "$lib")"
		cp -L "$lib" "$st$lib"
	done
	cp "$out/pvpmu.ko" "$st/lib/modules/pvpmu.ko"
	cp "$out/sdk-root/bin/"{pfinfo,pfstat,pffast,pfrecord} "$st/usr/bin/"
	cp "$out/pvpmu-hot" "$out/pvpmu-checks" "$out/pvpmu-alpha" \
		"$out/pvpmu-beta" "$st/usr/bin/"
	cp -L /lib/ld-musl-x86_64.so.1 "$st/lib/ld-musl-x86_64.so.1"
	echo "root:x:0:0:root:/root:/bin/sh" >"$st/etc/passwd"
	echo "root:x:0:" >"$st/etc/group"
	echo "vpmu" >"$st/etc/hostname"
	kib=$(($(du -sk "$st" | cut -f1) + 256 * 1024))
	rm -f "$out/rootfs.ext4.tmp"
	mke2fs -q -F -t ext4 -L vpmu-root -E root_owner=0:0 -d "$st" \
		"$out/rootfs.ext4.tmp" "${kib}k" >/dev/null ||
		die "mke2fs of the root file system failed"
	mv -f "$out/rootfs.ext4.tmp" "$out/rootfs.ext4"
}

publish() {
	local dir=$1 key=$2 f

	mkdir -p "$OUT_DIR"
	for f in vmlinux arch/x86/boot/bzImage; do
		cp -f "$dir/src/$f" "$OUT_DIR/"
	done
	{
		echo "kernelrelease $(cat "$dir/kernelrelease")"
		echo "source $SRC_PKG $(dpkg-query -W -f='${Version}' "$SRC_PKG")"
		echo "key $key"
		echo "cache $dir"
	} >"$OUT_DIR/kernel.version"
}

main() {
	local key dir

	install_packages
	mkdir -p "$CACHE_ROOT"
	TMP_IN=$(mktemp -d "$CACHE_ROOT/inputs.XXXXXX")
	trap 'rm -rf "$TMP_IN"' EXIT
	snapshot_inputs "$TMP_IN"
	use_inputs "$TMP_IN"
	key=$(cache_key)
	dir=$CACHE_ROOT/linux-$key
	mkdir -p "$dir"
	exec 9>"$dir.lock"
	flock 9
	[ -d "$dir/inputs" ] || mv "$TMP_IN" "$dir/inputs"
	use_inputs "$dir/inputs"
	if [ -f "$dir/.vpmu-done" ]; then
		log "cached build linux-$key"
	else
		log "building linux-$key in $dir"
		prepare_source "$dir"
		configure_kernel "$dir/src"
		build_kernel "$dir"
		touch "$dir/.vpmu-done"
	fi
	publish "$dir" "$key"
	build_init "$dir" "$OUT_DIR"
	build_pvpmu "$dir" "$OUT_DIR"
	build_initrd "$dir" "$OUT_DIR"
	build_rootfs "$OUT_DIR"
	log "done in $(elapsed): $OUT_DIR/{vmlinux,bzImage,initrd.cpio,rootfs.ext4}" \
		"($(cat "$dir/kernelrelease"))"
}

main "$@"
