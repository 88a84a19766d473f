#!/usr/bin/env bash
# test_docs.sh CGNN — every command shown in the documentation runs, so the docs cannot go stale.
#
# The pages: README.md, then docs/*.md in name order (ARCHITECTURE.md for its links only).
#   - Every fenced block of README.md and docs/*.md names its language. A block whose info string
#     starts with `sh` is a command block: it runs with `bash -e -o pipefail` and must exit 0, or
#     N when the info string says `sh exit=N`. In a `console` block, each `$ ` line is a command
#     and runs the same way. Every other block (`text`, `yaml`, `python`, ...) only shows text.
#   - The blocks of one page run in order, from the root of one scratch copy of the repository's
#     inputs per page (examples/, data/, scripts/, tests/fixtures/, tests/gigl_configs/): what a
#     block writes stays there, so a page may train in one block and embed in the next; the
#     repository is never written. `cgnn` is the binary under test (on PATH; its build's Python
#     package on PYTHONPATH), `mpirun` gets
#     --oversubscribe (and --allow-run-as-root as root).
#   - To fit CI, the scratch copy's examples/*.yaml train at most $STEPS steps and evaluate at
#     most 2 validation / test batches; every flag, path and key a block names is the real one.
#   - A command block may not name /tmp/ or ../shared (what it needs must be in the repository
#     and what it writes must stay in the scratch copy): products-scale and ../shared commands
#     are shown in `text` blocks.
#   - SKIPS below: the few command blocks that cannot run inside a test, each with its reason.
#     Blocks that use mpirun are skipped in a build without MPI, Python blocks without numpy
#     and torch (each with a message).
#   - Every relative link of README.md, ARCHITECTURE.md and docs/*.md names an existing file,
#     and every #anchor a heading of the page it points to (GitHub's heading ids).
# CGNN_TEST_SANITIZED=1 (the ASan/UBSan pass): README.md's commands, the link and format checks.
# DOCS_PAGES="README.md docs/EMBED.md" runs only those pages; KEEP=1 keeps the scratch copies.
set -u
CGNN=$(readlink -f "${1:?usage: test_docs.sh path/to/cgnn}")
SRC=${CGNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PY=/usr/bin/python3
SANITIZED=${CGNN_TEST_SANITIZED:-0}
STEPS=8
TMP=$(mktemp -d /tmp/cgnn-docs-XXXXXX)
trap '[[ -n "${KEEP:-}" ]] && echo "kept $TMP" || rm -rf "$TMP"' EXIT
fails=0
pass=0
skipped=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# SKIPS: "first command of the block|why it cannot run here" (the block's first line that is
# neither empty nor a comment must start with the first field).
SKIPS=(
  "bash scripts/run.sh|installs packages and builds the project; this test runs the binary ctest built"
  "cmake -S . -B build|a full build and test run; CI builds with scripts/test.sh"
  "bash scripts/fuzz.sh|builds the clang fuzz targets and fuzzes for minutes; pass 3 of scripts/test.sh runs it"
  "scripts/netns-cluster.sh up|needs root, network namespaces and tc; tests/test_netns.sh runs it where it can"
  "mpirun -np 2 cgnn train --job_name=fb --task_config_uri=examples/gigl/facebook_lp_homogeneous.yaml|GiGL's script under cgnn train: tests/test_trainer_command.sh runs this config (shortened) and checks what it writes"
)

cd "$SRC"
pages=()
if [[ -n ${DOCS_PAGES:-} ]]; then
  read -r -a pages <<<"$DOCS_PAGES"
elif [[ $SANITIZED == 1 ]]; then
  pages=(README.md)
else
  pages=(README.md $(ls docs/*.md))
fi

have_mpi=1
"$CGNN" --version | grep -q "distributed: MPI" && command -v mpirun >/dev/null || have_mpi=0
have_py=1
"$PY" -c "import numpy, torch" 2>/dev/null || have_py=0

# ---- links: relative targets exist, #anchors name a heading of their page ----------------------
if [[ -x $PY ]]; then
  "$PY" - README.md ARCHITECTURE.md docs/*.md <<'PY' && ok || bad "broken links (above)"
import os, re, sys
def anchors(path):
    ids, seen = set(), {}
    for line in strip_code_keep_headings(open(path).read()):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2)).replace("`", "").replace("*", "")
        slug = re.sub(r"[^\w\- ]", "", t.lower()).replace(" ", "-")
        n = seen.get(slug, 0); seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids
def strip_code_keep_headings(text):
    out, fence = [], None
    for line in text.split("\n"):
        s = line.lstrip()
        if fence is None and re.match(r"(`{3,}|~{3,})", s):
            fence = re.match(r"(`{3,}|~{3,})", s).group(1); continue
        if fence is not None:
            if s.startswith(fence) and s.strip().strip(fence[0]) == "":
                fence = None
            continue
        out.append(line)
    return out
bad = 0
for page in sys.argv[1:]:
    text = re.sub(r"`[^`]*`", "", "\n".join(strip_code_keep_headings(open(page).read())))
    for line in text.split("\n"):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(full):
                print(f"{page}: link to {target}: {full} does not exist"); bad += 1; continue
            if anchor and full.endswith(".md") and anchor not in anchors(full):
                print(f"{page}: link to {target}: no heading with id '{anchor}' in {full}"); bad += 1
sys.exit(1 if bad else 0)
PY
fi

# ---- the blocks of a page: $TMP/<page>/block<N>.sh, one line per block in $TMP/<page>/index ------
# index line: N<TAB>LINE<TAB>KIND(sh|console)<TAB>EXPECTED_EXIT
extract() { # extract PAGE DIR
  awk -v dir="$2" -v page="$1" '
    function fail(msg) { printf "%s:%d: %s\n", page, NR, msg > "/dev/stderr"; bad = 1 }
    BEGIN { inblock = 0; n = 0 }
    {
      line = $0
      if (!inblock) {
        if (match(line, /^ *(```+|~~~+)/)) {
          indent = RLENGTH; s = substr(line, 1, RLENGTH); sub(/^ */, "", s)
          indent -= length(s); fence = s
          info = substr(line, RLENGTH + 1); sub(/^ +/, "", info); sub(/ +$/, "", info)
          lang = info; sub(/[ {].*/, "", lang)
          if (lang == "") fail("a fenced block without a language (use text, sh, yaml, console, ...)")
          inblock = 1; start = NR; kind = ""
          if (lang == "sh" || lang == "console") {
            kind = lang; n++; expect = 0
            if (match(info, /exit=[0-9]+/)) expect = substr(info, RSTART + 5, RLENGTH - 5) + 0
            file = dir "/block" n ".sh"; printf "" > file
            printf "%d\t%d\t%s\t%d\n", n, NR, kind, expect > (dir "/index")
          }
          next
        }
      } else {
        s = line; sub(/^ */, "", s)
        if (index(s, substr(fence, 1, 1)) == 1 && s ~ /^(`+|~+) *$/ && length(s) >= length(fence)) {
          if (kind != "") close(file)
          inblock = 0; next
        }
        if (kind == "") next
        body = line
        for (i = 0; i < indent && substr(body, 1, 1) == " "; i++) body = substr(body, 2)
        if (kind == "sh") print body > file
        else if (substr(body, 1, 2) == "$ ") print substr(body, 3) > file
      }
    }
    END { if (inblock) { printf "%s:%d: unterminated fenced block\n", page, start > "/dev/stderr"; bad = 1 }
          exit bad }
  ' "$SRC/$1"
}

# ---- the scratch copy's examples: at most $STEPS steps, 2 validation and 2 test batches ---------
shorten() { # shorten EXAMPLE.yaml
  local f=$1 k v
  for k in num_max_train_batches:$STEPS num_val_batches:2 num_test_batches:2; do
    v=${k#*:}
    k=${k%%:*}
    if grep -q "^ *$k:" "$f"; then
      sed -i "s/^\( *\)$k:.*/\1$k: \"$v\"/" "$f"
    else
      sed -i "s/^\( *\)trainerArgs: *$/&\n\1  $k: \"$v\"/" "$f"
    fi
  done
}

mkdir -p "$TMP/bin" "$TMP/base/tests"
ln -s "$CGNN" "$TMP/bin/cgnn"
cp -r examples data scripts "$TMP/base/"
cp -r tests/fixtures tests/gigl_configs "$TMP/base/tests/"
for f in "$TMP"/base/examples/*.yaml "$TMP"/base/examples/gigl/*.yaml "$TMP"/base/examples/byod/*.yaml; do shorten "$f"; done
ROOTFLAG=""
[[ $(id -u) -eq 0 ]] && ROOTFLAG=--allow-run-as-root
cat >"$TMP/prelude.sh" <<EOF
set -e -o pipefail
export PATH="$TMP/bin:\$PATH"
export PYTHONPATH="$(dirname "$CGNN")/python"  # the build's Python package (docs/PYTHON.md)
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun() { command mpirun --oversubscribe --bind-to none $ROOTFLAG "\$@"; }
EOF

blocks=0
for page in "${pages[@]}"; do
  [[ -f $page ]] || { bad "$page: no such page"; continue; }
  name=${page//\//_}
  dir="$TMP/$name"
  mkdir -p "$dir"
  : >"$dir/index"
  extract "$page" "$dir" || { bad "$page: malformed fenced blocks (above)"; continue; }
  [[ -s $dir/index ]] || continue
  cp -r "$TMP/base" "$dir/root"
  t0=$(date +%s%N)
  while IFS=$'\t' read -r n line kind expect; do
    block="$dir/block$n.sh"
    where="$page:$line ($kind block)"
    first=$(grep -v -e '^[[:space:]]*$' -e '^[[:space:]]*#' "$block" | head -1 | sed 's/^[[:space:]]*//')
    reason=""
    for s in "${SKIPS[@]}"; do
      [[ $first == "${s%%|*}"* ]] && reason=${s#*|}
    done
    if [[ -n $reason ]]; then
      echo "skip $where: $reason"; skipped=$((skipped + 1)); continue
    fi
    if grep -q -e '/tmp/' -e '\.\./shared' "$block"; then
      bad "$where: a command block names /tmp/ or ../shared (show it as text, or use paths inside the repository)"
      continue
    fi
    if [[ $have_mpi == 0 ]] && grep -qw mpirun "$block"; then
      echo "skip $where: no MPI (serial build or no mpirun)"; skipped=$((skipped + 1)); continue
    fi
    if [[ $have_py == 0 ]] && grep -q python3 "$block"; then
      echo "skip $where: $PY lacks numpy or torch"; skipped=$((skipped + 1)); continue
    fi
    blocks=$((blocks + 1))
    cat "$TMP/prelude.sh" "$block" >"$dir/run$n.sh"
    env=()
    # OpenMPI keeps allocations alive past MPI_Finalize by design; LeakSanitizer would report them
    [[ $SANITIZED == 1 ]] && grep -qw mpirun "$block" && env=(ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0")
    (cd "$dir/root" && env "${env[@]}" timeout -k 10 300 bash "$dir/run$n.sh") </dev/null >"$dir/log$n" 2>&1
    rc=$?
    if [[ $rc -ne $expect ]]; then
      bad "$where: exit status $rc, the page expects $expect"
      sed 's/^/    | /' "$block"
      tail -25 "$dir/log$n" | sed 's/^/    > /'
    else
      ok
    fi
  done <"$dir/index"
  ms=$((($(date +%s%N) - t0) / 1000000))
  printf '%s: %d command blocks, %d.%01d s\n' "$page" "$(wc -l <"$dir/index")" $((ms / 1000)) $((ms % 1000 / 100))
  [[ -n ${KEEP:-} ]] || rm -rf "$dir/root"
done

# the pages must hold commands at all (a parser that finds nothing would pass anything)
min=3
[[ $SANITIZED == 1 || -n ${DOCS_PAGES:-} ]] || min=20
[[ $((blocks + skipped)) -ge $min ]] && ok || bad "only $((blocks + skipped)) command blocks found (expected >= $min)"

echo "test_docs: $pass passed, $fails failed, $blocks blocks run, $skipped skipped"
[[ $fails -eq 0 ]]
