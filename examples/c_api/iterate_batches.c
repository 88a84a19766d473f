/* iterate_batches.c — cgnn's C API (include/cgnn.h) from outside the source tree: opens a dataset,
 * iterates one epoch of its first task's training batches and prints what it saw. Trains nothing.
 *
 *   cc iterate_batches.c $(pkg-config --cflags --libs cgnn) -o iterate_batches
 *   ./iterate_batches data/cora [batch_size] [workers]
 *
 * Prints: "<N> batches, <items> items, <nodes> nodes, <edges> sampled edges, crc <hex>"; the CRC
 * is of every batch's node ids and block edges (the same for any number of sampler threads). */
#include <cgnn.h>
#include <stdio.h>
#include <stdlib.h>

/* CRC-32 (IEEE), bytewise: enough for a check */
static unsigned crc(unsigned c, const void *p, size_t n) {
    const unsigned char *b = p;
    c = ~c;
    for (size_t i = 0; i < n; i++) {
        c ^= b[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATASET [batch_size] [workers]\n", argv[0]);
        return 2;
    }
    if (cgnn_version() / 100 != (CGNN_VERSION_MAJOR * 10000 + CGNN_VERSION_MINOR * 100) / 100) {
        fprintf(stderr, "libcgnn %d is not the header's %s\n", cgnn_version(), CGNN_VERSION_STRING);
        return 1;
    }
    cgnn_error e;
    cgnn_dataset *ds;
    if (cgnn_dataset_open(argv[1], 0, &ds, &e) != CGNN_OK) {
        fprintf(stderr, "error: %s\n", e.message);
        return e.code;
    }
    cgnn_loader_options o;
    cgnn_loader_options_init(&o);
    o.batch_size = argc > 2 ? atoll(argv[2]) : 64;
    o.num_workers = argc > 3 ? atoi(argv[3]) : 2;
    o.fanouts[0] = 10, o.fanouts[1] = 5;
    if (cgnn_dataset_task_kind(ds, 0) == CGNN_TASK_LINK_PREDICTION) o.num_negatives = 32;
    cgnn_loader *l;
    if (cgnn_loader_create(ds, &o, &l, &e) != CGNN_OK || cgnn_loader_start_epoch(l, 0, &e) != CGNN_OK) {
        fprintf(stderr, "error: %s\n", e.message);
        return e.code;
    }
    long long batches = 0, items = 0, nodes = 0, edges = 0;
    unsigned c = 0;
    cgnn_batch *b;
    int rc;
    while ((rc = cgnn_loader_next(l, &b, &e)) == CGNN_OK && b) {
        cgnn_batch_info bi;
        cgnn_batch_info_get(b, &bi);
        batches++, items += bi.num_items, edges += bi.num_sampled_edges;
        cgnn_array a;
        for (int t = 0; t < bi.num_node_types; t++)
            if (cgnn_batch_array(b, CGNN_FIELD_NODES, t, &a, &e) == CGNN_OK && a.data) {
                nodes += a.shape[0];
                c = crc(c, a.data, (size_t)a.shape[0] * 8);
            }
        for (int k = 0; k < bi.num_layers * bi.num_edge_types; k++)
            if (cgnn_batch_array(b, CGNN_FIELD_BLOCK_INDICES, k, &a, &e) == CGNN_OK && a.data)
                c = crc(c, a.data, (size_t)a.shape[0] * 4);
        cgnn_batch_release(b);
    }
    if (rc != CGNN_OK) {
        fprintf(stderr, "error: %s\n", e.message);
        return rc;
    }
    printf("%lld batches, %lld items, %lld nodes, %lld sampled edges, crc %08x\n", batches, items, nodes, edges, c);
    cgnn_loader_free(l);
    cgnn_dataset_close(ds);
    return 0;
}
