#!/usr/bin/env bash
# setup.sh: install the Debian packages vpmu needs (only those missing),
# then configure and build into ./build. Idempotent; safe to run again.
# Usage: [VPMU_SETUP=demo] [VPMU_TARGETS="t1 t2"] scripts/setup.sh [cmake -D...]
#   VPMU_SETUP=demo  only the packages that build vpmu and its guests
#                    (scripts/demo.sh); default: every test's too
#   VPMU_TARGETS     build only these targets (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

# To configure and build vpmu, its guest images and (configured, not built
# unless asked for) its tests: what CMake's REQUIRED checks look for.
BUILD_PACKAGES=(
	build-essential cmake pkg-config
	linux-libc-dev
	libcriterion-dev libelf-dev
	libxml2-dev
	uuid-dev
	libvirt-dev libvirt0
	libjson-c-dev
	libseccomp-dev
	libdw-dev
	libpfm4-dev
	libmicrohttpd-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libgnutls28-dev
)
# To run every test (scripts/test.sh): the format check, the Linux guest
# and its kernel module, the real clients of `vpmu serve` (Prometheus, go
# tool pprof), fuzzing (clang), man pages (help2man), virt-install's
# domains (virtinst), JSON checks (jq).
TEST_PACKAGES=(
	clang-format
	libxml2-utils
	linux-headers-amd64 musl-tools
	prometheus golang-go
	clang libclang-rt-14-dev
	linux-perf
	jq
	help2man
	virtinst
)
PACKAGES=("${BUILD_PACKAGES[@]}")
if [ "${VPMU_SETUP:-all}" != demo ]; then
	PACKAGES+=("${TEST_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then
		SUDO="sudo"
	fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		--no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} \
	-DVPMU_WERROR=ON "$@" >/dev/null
read -ra targets <<<"${VPMU_TARGETS:-}"
cmake --build "$BUILD_DIR" -j"$(nproc)" ${targets[@]:+--target "${targets[@]}"}
