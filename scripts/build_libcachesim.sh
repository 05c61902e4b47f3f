#!/usr/bin/env bash
# Builds libCacheSim's C simulator, `cachesim`, from source: the peer of
# scripts/bench_vs_libcachesim.py.
#
#   scripts/build_libcachesim.sh [VERSION] [DEST]
#
# VERSION (default 0.3.5) is a release of the `libcachesim` PyPI package, whose source
# distribution carries the whole C library and the `cachesim` command line tool under
# src/libCacheSim. It is downloaded with pip (PyPI only, no other network), built with cmake in
# the Release configuration (-O3 -DNDEBUG), and `cachesim` is copied to
# DEST (default target/peers/libcachesim-VERSION/cachesim). Needs cmake, a C/C++ compiler and the
# glib and zstd development packages (Debian: cmake build-essential libglib2.0-dev libzstd-dev
# pkg-config); on Debian they are installed when missing and this runs as root.
#
# A checkout of the libCacheSim repository can be built the same way:
#   SRC=/path/to/libCacheSim scripts/build_libcachesim.sh repo-0252dcf
# builds $SRC (the directory holding libCacheSim's top CMakeLists.txt) instead of downloading.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-0.3.5}"
dest="${2:-target/peers/libcachesim-$version/cachesim}"
work="target/peers/build-$version"

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v c++ >/dev/null || need+=(build-essential)
pkg-config --exists glib-2.0 2>/dev/null || need+=(libglib2.0-dev pkg-config)
pkg-config --exists libzstd 2>/dev/null || need+=(libzstd-dev pkg-config)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq "${need[@]}"
  else
    echo "build_libcachesim: missing ${need[*]}; install them (Debian: apt-get install ${need[*]})" >&2
    exit 1
  fi
fi

mkdir -p "$work"
if [ -n "${SRC:-}" ]; then
  src="$SRC"
else
  py="${PYTHON:-python3}"
  if [ ! -f "$work/libcachesim-$version.tar.gz" ]; then
    "$py" -m pip download --quiet --no-deps --no-binary :all: "libcachesim==$version" -d "$work"
  fi
  tar xzf "$work/libcachesim-$version.tar.gz" -C "$work"
  src="$work/libcachesim-$version/src/libCacheSim"
fi
[ -f "$src/CMakeLists.txt" ] || { echo "build_libcachesim: no CMakeLists.txt in $src" >&2; exit 1; }
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log"
cmake --build "$work/build" --target cachesim -j "$(nproc)" >"$work/build.log"
bin="$(find "$work/build" -name cachesim -type f -perm -u+x | head -1)"
[ -n "$bin" ] || { echo "build_libcachesim: the build made no cachesim (see $work/build.log)" >&2; exit 1; }
mkdir -p "$(dirname "$dest")"
cp "$bin" "$dest"
echo "$dest"
