#!/bin/bash
# test_c_api.sh — libcgnn from outside the tree: `cmake --install` into a temporary prefix, then
# examples/c_api/iterate_batches.c is compiled against the installed header, shared library and
# pkg-config file (and once against the static library), and run on the bundled datasets.
set -u
CGNN=${1:?usage: test_c_api.sh /abs/path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=$(dirname "$CGNN")
TMP=$(mktemp -d /tmp/cgnn-capi-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v pkg-config >/dev/null || { echo "FAIL: pkg-config is not installed (scripts/install-deps.sh)"; exit 1; }

cmake --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/install.log" 2>&1 || bad "cmake --install: $(tail -3 "$TMP/install.log")"
LIBDIR=$(dirname "$(find "$TMP/prefix" -name cgnn.pc | head -1)")/..
[[ -f "$TMP/prefix/include/cgnn.h" ]] || bad "the header was not installed"
[[ -x "$TMP/prefix/bin/cgnn" ]] || bad "the cgnn binary was not installed"
ls "$LIBDIR"/libcgnn.so* >/dev/null 2>&1 || bad "libcgnn.so was not installed"
[[ -f "$LIBDIR/libcgnn.a" ]] || bad "libcgnn.a was not installed"
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
[[ $(pkg-config --modversion cgnn) == $("$CGNN" --version | head -1 | grep -o '[0-9]*\.[0-9]*\.[0-9]*' | head -1) ]] ||
  bad "pkg-config's version $(pkg-config --modversion cgnn) is not cgnn --version's"
# only the API is exported from the shared library
if nm -D --defined-only "$LIBDIR"/libcgnn.so | awk '{print $3}' | grep -v '^cgnn_' | grep -qv '^[._]'; then
  bad "libcgnn.so exports more than include/cgnn.h: $(nm -D --defined-only "$LIBDIR"/libcgnn.so | awk '{print $3}' | grep -v '^cgnn_' | grep -v '^[._]' | head -5 | tr '\n' ' ')"
fi

cc -std=c11 -Wall -Wextra -Werror "$SRC/examples/c_api/iterate_batches.c" $(pkg-config --cflags --libs cgnn) \
  -Wl,-rpath,"$LIBDIR" -o "$TMP/iterate" 2>"$TMP/cc.log" || bad "compiling against the installed tree: $(cat "$TMP/cc.log")"
cc -std=c11 "$SRC/examples/c_api/iterate_batches.c" $(pkg-config --cflags cgnn) "$LIBDIR/libcgnn.a" \
  $(pkg-config --libs-only-other --static cgnn) $(pkg-config --static --libs cgnn | sed 's/-lcgnn//') -fopenmp \
  -o "$TMP/iterate_static" 2>"$TMP/cc2.log" || bad "linking the static library: $(tail -5 "$TMP/cc2.log")"
ldd "$TMP/iterate_static" 2>/dev/null | grep -q libcgnn && bad "the static build links libcgnn.so"

cd "$SRC"
# Cora: 140 training seeds in batches of 64 -> 3 batches; the same batches for 0 and 3 threads
out0=$("$TMP/iterate" data/cora 64 0 2>&1) || bad "iterate on cora: $out0"
out3=$("$TMP/iterate" data/cora 64 3 2>&1) || bad "iterate on cora (3 threads): $out3"
[[ $out0 == "3 batches, 140 items, "* ]] || bad "cora: $out0"
[[ $out0 == "$out3" ]] || bad "sampler threads changed the batches: '$out0' vs '$out3'"
outs=$("$TMP/iterate_static" data/cora 64 2 2>&1) || bad "static iterate: $outs"
[[ $outs == "$out0" ]] || bad "the static library's batches differ: '$outs' vs '$out0'"
# a typed link prediction dataset
outl=$("$TMP/iterate" data/lastfm-mini 512 2 2>&1) || bad "iterate on lastfm-mini: $outl"
[[ $outl == *" batches, "*" items, "* ]] || bad "lastfm-mini: $outl"
# errors: a missing dataset is exit 2 with the path named, nothing else printed
err=$("$TMP/iterate" /nonexistent/ds 2>&1)
rc=$?
[[ $rc == 2 && $err == "error: "*"/nonexistent/ds"* ]] || bad "missing dataset: rc $rc, '$err'"
[[ $(echo "$err" | wc -l) == 1 ]] || bad "the library printed something: $err"

[[ $fails == 0 ]] || { echo "$fails failures"; exit 1; }
echo "ok: installed libcgnn (shared and static) iterates cora and lastfm-mini: $out0"
