#!/usr/bin/env bash
# setup.sh: install the Debian packages vpmu needs (only those missing),
# then configure and build into ./build. Idempotent; safe to run again.
# Usage: scripts/setup.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
	build-essential cmake pkg-config clang-format
	linux-libc-dev
	libcriterion-dev
	libxml2-dev libxml2-utils
	uuid-dev
	libvirt-dev libvirt0
	libpfm4-dev
	linux-headers-amd64 musl-tools
	libjson-c-dev
	libseccomp-dev
	libelf-dev libdw-dev
	libmicrohttpd-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libgnutls28-dev prometheus golang-go
	clang libclang-rt-14-dev
	linux-perf
	jq
)

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
cmake --build "$BUILD_DIR" -j"$(nproc)"
