"""make_cliques.py DIR — the link-prediction test dataset of tests/test_rec.sh and
tests/test_lightgcn_train.sh: two disjoint 16-node cliques of featureless nodes, every directed
pair; a seeded fifth of the pairs is the test split (its first half the validation split), the
rest trains and is the graph's edges."""
import numpy as np, sys, os
d = sys.argv[1]; n = 16
rng = np.random.default_rng(0)
pairs = [(a, b) for c in (0, n) for a in range(c, c + n) for b in range(c, c + n) if a != b]
pairs = np.array(pairs, dtype=np.int64); rng.shuffle(pairs)
n_test = len(pairs) // 5
test, train = pairs[:n_test], pairs[n_test:]
np.save(os.path.join(d, "edges.npy"), np.ascontiguousarray(train.T))
np.save(os.path.join(d, "train.npy"), train)
np.save(os.path.join(d, "valid.npy"), test[: len(test) // 2])
np.save(os.path.join(d, "test.npy"), test)
open(os.path.join(d, "metadata.yaml"), "w").write("""dataset_name: cliques
graph:
  nodes: [{num: 32}]
  edges: [{format: numpy, path: edges.npy}]
tasks:
  - name: link_prediction
    train_set: [{data: [{name: seeds, format: numpy, path: train.npy}]}]
    validation_set: [{data: [{name: seeds, format: numpy, path: valid.npy}]}]
    test_set: [{data: [{name: seeds, format: numpy, path: test.npy}]}]
""")
