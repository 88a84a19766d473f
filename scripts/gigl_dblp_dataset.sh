#!/usr/bin/env bash
# gigl_dblp_dataset.sh OUT [DBLP_HGB] — a GraphBolt dataset of DBLP with GiGL's DBLP type names
# (author, paper, term; relation "to"), so GiGL's DBLP configs
# (tests/gigl_configs/examples/link_prediction/configs/e2e_het_dblp_sup_task_config.yaml) run on
# real data unchanged but for sharedConfig's paths. The arrays are symbolic links to DBLP_HGB's
# (default: ../shared/data/dblp-hgb beside the repository); nothing is copied.
set -euo pipefail
out=${1:?usage: gigl_dblp_dataset.sh OUT [DBLP_HGB]}
src=$(cd "${2:-$(dirname "$0")/../../shared/data/dblp-hgb}" && pwd)
mkdir -p "$out"
for f in edges-author-writes-paper edges-paper-written_by-author edges-term-term_of-paper feat-author feat-paper feat-term; do
  ln -sf "$src/$f.npy" "$out/$f.npy"
done
cat >"$out/metadata.yaml" <<'YAML'
dataset_name: dblp-gigl
# dblp-hgb (scripts/gigl_dblp_dataset.sh) with GiGL's DBLP type names; no task: GiGL's DBLP
# configs are self-supervised (ssl_positive_label_percentage)
graph:
  nodes:
    - {type: author, num: 4057}
    - {type: paper, num: 14328}
    - {type: term, num: 7723}
  edges:
    - {type: "author:to:paper", format: numpy, path: edges-author-writes-paper.npy}
    - {type: "paper:to:author", format: numpy, path: edges-paper-written_by-author.npy}
    - {type: "term:to:paper", format: numpy, path: edges-term-term_of-paper.npy}
feature_data:
  - {domain: node, type: author, name: feat, format: numpy, in_memory: true, path: feat-author.npy}
  - {domain: node, type: paper, name: feat, format: numpy, in_memory: true, path: feat-paper.npy}
  - {domain: node, type: term, name: feat, format: numpy, in_memory: true, path: feat-term.npy}
YAML
echo "$out"
