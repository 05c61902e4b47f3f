#!/usr/bin/env bash
# Builds the SAC paper's artifact (github.com/dcstrange/sac, GPL-3.0): the peer of
# scripts/bench_vs_sac_artifact.py.
#
#   scripts/build_sac_artifact.sh SRC [DEST]
#
# SRC is a checkout of the artifact (`git clone https://github.com/dcstrange/sac`; the figures
# in docs/benchmarks.md are of commit 3ede2c4). Its Makefile compiles without optimisation
# (`gcc -g`); the peer benchmarked is its optimised build, so this builds a copy of SRC with
# `gcc -O3` (override with CC=...) into target/peers/build-sac-artifact and copies the program
# to DEST (default target/peers/sac-artifact/sac). Nothing of the artifact enters this
# repository. Needs make and gcc (Debian: build-essential; installed when missing and this runs
# as root).
set -euo pipefail
cd "$(dirname "$0")/.."
src="${1:?usage: scripts/build_sac_artifact.sh SRC [DEST]}"
dest="${2:-target/peers/sac-artifact/sac}"
work="target/peers/build-sac-artifact"
cc="${CC:-gcc -O3}"

[ -f "$src/Makefile" ] && [ -f "$src/src/main.c" ] \
  || { echo "build_sac_artifact: $src is not a checkout of github.com/dcstrange/sac (no Makefile, src/main.c)" >&2; exit 1; }
if ! command -v make >/dev/null || ! command -v gcc >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq build-essential
  else
    echo "build_sac_artifact: needs make and gcc (Debian: apt-get install build-essential)" >&2
    exit 1
  fi
fi
rm -rf "$work"
mkdir -p "$work"
cp -R "$src/." "$work/"
rm -f "$work"/*.o "$work/sac"
# GCC 10+ defaults to -fno-common; the artifact's headers define globals, so keep the old rule.
make -C "$work" CC="$cc -fcommon" >"$work/build.log" 2>&1 \
  || { echo "build_sac_artifact: the build failed (see $work/build.log)" >&2; exit 1; }
[ -x "$work/sac" ] || { echo "build_sac_artifact: the build made no sac (see $work/build.log)" >&2; exit 1; }
mkdir -p "$(dirname "$dest")"
cp "$work/sac" "$dest"
echo "$dest"
