/* fuzz_csv_edges.c — libFuzzer target: the CSV edge reader of dataset_open
 * (graph.edges[0].format: csv).
 *
 * Input: the bytes of the CSV edge file. The private directory holds a fixed metadata.yaml
 * (16 nodes, edges from edges.csv), and the input is written as edges.csv. The dataset must
 * open with every edge id in range, or fail with an input error naming the CSV file.
 */
#include "fuzz_util.h"
#include "io/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char META[] =
    "graph:\n"
    "  nodes:\n"
    "    - num: 16\n"
    "  edges:\n"
    "    - format: csv\n"
    "      path: edges.csv\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char meta[4096], path[4096];
    static int ready;
    if (!ready) {
        fuzz_write("metadata.yaml", META, sizeof META - 1, meta);
        ready = 1;
    }
    fuzz_write("edges.csv", data, size, path);
    dataset ds;
    cgnn_err err = {0};
    int rc = dataset_open(&ds, fuzz_dir(), &err);
    fuzz_check(rc, &err, path);
    if (rc == 0) {
        const ds_edges *e = &ds.edge_types[0].edges;
        FUZZ_ASSERT(e->id_dtype == NPY_DTYPE_INT64 && e->num_edges >= 0);
        const int64_t *src = e->src, *dst = e->dst;
        for (int64_t i = 0; i < e->num_edges; i++)
            FUZZ_ASSERT(src[i] >= 0 && src[i] < 16 && dst[i] >= 0 && dst[i] < 16);
        dataset_close(&ds);
    }
    return 0;
}
