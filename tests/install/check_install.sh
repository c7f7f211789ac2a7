#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds two consumers against it: one through
# pkg-config, one through find_package(tad). Usage: check_install.sh BUILD_DIR
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
libdir=$(ls -d "$tmp"/prefix/lib*/ | head -1)
test -f "$tmp/prefix/include/tad.h"
test -f "$tmp/prefix/share/tad/python/tad_worker.py"
test -x "$tmp/prefix/bin/tad"
# What an exported backward needs (docs/aot.md): the worker's export and support kernels, and the
# example programs, which must build against the installed library alone.
test -f "$tmp/prefix/share/tad/python/tad_export.py"
test -f "$tmp/prefix/share/tad/python/tad_aot_support.py"
test -f "$tmp/prefix/share/doc/tad/examples/aot/rust/src/main.rs"
test -f "$tmp/prefix/share/tad/rust/tad-sys/src/lib.rs"
test -f "$tmp/prefix/share/tad/rust/tad/Cargo.toml"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c99 -Wall -Wextra -Werror "$here/consumer/main.c" $(pkg-config --cflags --libs tad) \
   -Wl,-rpath,"$libdir" -o "$tmp/pc_consumer"
(cd "$tmp" && ./pc_consumer)
cc -std=gnu99 -Wall -Wextra -Werror "$tmp/prefix/share/doc/tad/examples/aot/backward.c" \
   $(pkg-config --cflags --libs tad) -ldl -lm -Wl,-rpath,"$libdir" -o "$tmp/aot_backward"

cmake -S "$here/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
(cd "$tmp" && "$tmp/cm/consumer")
"$tmp/prefix/bin/tad" --version

# One version everywhere, and the SONAME of a 0.x library names its minor version (docs/abi.md).
version=$("$tmp/prefix/bin/tad" --version | sed 's/^tad //')
test "$(pkg-config --modversion tad)" = "$version"
case $version in
  0.*) soname=libtad.so.${version%.*} ;;
  *) soname=libtad.so.${version%%.*} ;;
esac
readelf -d "$libdir/libtad.so" | grep -q "(SONAME).*\[$soname\]" ||
  { echo "libtad's SONAME is not $soname" >&2; readelf -d "$libdir/libtad.so" | grep SONAME >&2; exit 1; }
test -f "$libdir/$soname"
echo "install ok"
