#!/usr/bin/env bash
# Builds vendor/libsamplerate/samplerate.wasm, the WebAssembly libsamplerate (Secret Rabbit Code,
# Erik de Castro Lopo, BSD-2-Clause) that src/dsp/libsamplerate.ts loads, from Debian's source of
# libsamplerate 0.2.2, unmodified, with Debian's clang 14 and wasi-libc. The binary is committed
# (users' machines have no C compiler); this script says exactly how it was made, and
# `--check` rebuilds it and fails unless the result is the committed file, byte for byte (.ci/run
# does that on every CI run).
#
# Why our own build (issue 20): the npm registry's libsamplerate (`@alexanderolsen/libsamplerate-js`)
# is compiled to JavaScript (wasm2js): 2 MB to parse, 90–120 ms before its first conversion on
# every start of an engine worker, +28 MiB per thread. This one is 114 KiB of WebAssembly: ~2 ms.
# Its output is the same, bit for bit (test/dsp/libsamplerate.test.ts compares it with that
# package on random signals, rates and chunkings).
#
# Needs: apt-get install clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32 curl
# Flags: -O2 as upstream's own build; -DNDEBUG drops assert(), whose fprintf would import WASI
# functions (the module imports nothing); only the sinc medium-quality converter, the one tts uses
# (src/dsp/libsamplerate.ts), so src_new refuses the others.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.2.2
TARBALL=libsamplerate_${VERSION}.orig.tar.gz
URL=http://deb.debian.org/debian/pool/main/libs/libsamplerate/$TARBALL
# From Debian's libsamplerate_0.2.2-3.dsc (Checksums-Sha256).
SHA256=16e881487f184250deb4fcb60432d7556ab12cb58caea71ef23960aec6c0405a
OUT=vendor/libsamplerate/samplerate.wasm

check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -sSfL --retry 3 -o "$work/$TARBALL" "$URL"
echo "$SHA256  $work/$TARBALL" | sha256sum -c --quiet -
tar xzf "$work/$TARBALL" -C "$work"
src="$work/libsamplerate-$VERSION"

exports=(src_new src_process src_reset src_delete src_strerror malloc free)
# clang runs binaryen's wasm-opt after linking an optimised build whenever it finds one beside
# itself or on PATH (a machine with binaryen installed built 114,354 bytes instead of the committed
# 116,686): clang runs from LLVM's own folder with a PATH of its linker alone, so the result never
# depends on what else is installed.
mkdir "$work/bin"
ln -s "$(command -v wasm-ld-14)" "$work/bin/wasm-ld-14"
clang=$(readlink -f "$(command -v clang-14)")
# -nostdlibinc: only wasi-libc's headers (and clang's own), never a /usr/local/include of the machine.
PATH="$work/bin" "$clang" --target=wasm32-wasi -O2 -DNDEBUG -nostdlibinc -isystem /usr/include/wasm32-wasi \
  -DENABLE_SINC_MEDIUM_CONVERTER -DHAVE_STDBOOL_H "-DPACKAGE=\"libsamplerate\"" "-DVERSION=\"$VERSION\"" \
  -I"$src/include" -mexec-model=reactor -fuse-ld=lld -Wl,--strip-all \
  "${exports[@]/#/-Wl,--export=}" \
  -o "$work/samplerate.wasm" \
  "$src/src/samplerate.c" "$src/src/src_sinc.c" "$src/src/src_linear.c" "$src/src/src_zoh.c"

if $check; then
  if cmp -s "$work/samplerate.wasm" "$OUT"; then
    echo "$OUT is what libsamplerate $VERSION's source builds to ($(sha256sum < "$OUT" | cut -c1-16)…)"
  else
    echo "$OUT differs from the build of libsamplerate $VERSION's source: rebuild it with $0" >&2
    exit 1
  fi
else
  mkdir -p "$(dirname "$OUT")"
  install -m 644 "$work/samplerate.wasm" "$OUT"
  cp "$src/COPYING" "$(dirname "$OUT")/COPYING"
  echo "wrote $OUT ($(stat -c %s "$OUT") bytes)"
fi
