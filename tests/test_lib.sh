# test_lib.sh — sourced by the CLI test scripts once they have set CGNN and TMP_PREFIX: SRC (the
# source tree), a temporary folder TMP (removed at exit unless KEEP is set), the working directory
# SRC, and the pass / fail counters with ok and bad. Each script ends with its own summary line
# and `[[ $fails -eq 0 ]]`.
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TMP=$(mktemp -d "/tmp/$TMP_PREFIX-XXXXXX")
trap "[[ -n \"${KEEP:-}\" ]] || rm -rf \"$TMP\"" EXIT
cd "$SRC" || exit 1
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
