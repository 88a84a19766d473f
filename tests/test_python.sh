#!/bin/bash
# test_python.sh — the Python package (python/cgnn, docs/PYTHON.md) as the build left it in
# BUILD/python: tests/python/test_cgnn.py against the C API, the native loader's rules and the
# native trainer (a plain-PyTorch GraphSAGE on cgnn.NeighborLoader vs `cgnn train`, Cora, 3 seeds).
set -u
CGNN=${1:?usage: test_python.sh /abs/path/to/cgnn}
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=$(dirname "$CGNN")
if ! ls "$BUILD"/python/cgnn/_C*.so >/dev/null 2>&1; then
  echo "FAIL: $BUILD/python/cgnn/_C*.so was not built (python3-dev missing? scripts/install-deps.sh installs it)"
  exit 1
fi
cd "$SRC"
PYTHONPATH="$BUILD/python" OMP_NUM_THREADS=2 /usr/bin/python3 tests/python/test_cgnn.py "$CGNN"
