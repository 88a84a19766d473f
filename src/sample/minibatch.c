/* minibatch.c — worst-case allocation of a minibatch; see minibatch.h. */
#include "sample/minibatch.h"

#include <stdlib.h>
#include <string.h>

int minibatch_alloc(minibatch *mb, const minibatch_capacity *cap, cgnn_err *err) {
    memset(mb, 0, sizeof *mb);
    mb->cap = *cap;
    const int L = cap->num_layers;
    CGNN_CHECK(L >= 1 && L <= MINIBATCH_MAX_LAYERS);
    const int64_t max_all = cap->max_nodes[L];
    int ok = 1;
    mb->items = malloc((size_t)(cap->max_items + 1) * sizeof(int64_t));
    mb->item_local = malloc((size_t)(cap->max_items + 1) * sizeof(int32_t));
    mb->labels = malloc((size_t)(cap->max_items + 1) * sizeof(int64_t));
    mb->listed_off = malloc((size_t)(cap->max_items + 1) * sizeof(int64_t));
    mb->listed_len = malloc((size_t)(cap->max_items + 1) * sizeof(int64_t));
    mb->input_nodes = malloc((size_t)(max_all + 1) * sizeof(int64_t));
    ok = mb->items && mb->item_local && mb->labels && mb->listed_off && mb->listed_len && mb->input_nodes;
    /* hop h produces block L-1-h; its dst are the nodes after h hops */
    for (int h = 0; h < L && ok; h++) {
        sampler_block *b = &mb->blocks[L - 1 - h];
        b->indptr = malloc((size_t)(cap->max_nodes[h] + 1) * sizeof(int64_t));
        b->indices = malloc((size_t)(cap->max_edges[h] + 1) * sizeof(int32_t));
        b->t_indptr = malloc((size_t)(cap->max_nodes[h + 1] + 1) * sizeof(int64_t));
        b->t_indices = malloc((size_t)(cap->max_edges[h] + 1) * sizeof(int32_t));
        b->t_eid = malloc((size_t)(cap->max_edges[h] + 1) * sizeof(int32_t));
        ok = b->indptr && b->indices && b->t_indptr && b->t_indices && b->t_eid;
    }
    if (ok && cap->feat_dim > 0) {
        mb->features = malloc((size_t)(max_all + 1) * (size_t)cap->feat_dim * sizeof(float));
        ok = mb->features != NULL;
    }
    if (!ok) {
        minibatch_free(mb);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating mini-batch buffers (%lld nodes)",
                       (long long)max_all);
    }
    mb->num_layers = L;
    mb->feat_dim = cap->feat_dim;
    return 0;
}

void minibatch_free(minibatch *mb) {
    if (!mb) return;
    free(mb->items);
    free(mb->item_local);
    free(mb->labels);
    free(mb->listed_off);
    free(mb->listed_len);
    free(mb->input_nodes);
    free(mb->features);
    for (int l = 0; l < MINIBATCH_MAX_LAYERS; l++) {
        free(mb->blocks[l].indptr);
        free(mb->blocks[l].indices);
        free(mb->blocks[l].t_indptr);
        free(mb->blocks[l].t_indices);
        free(mb->blocks[l].t_eid);
    }
    memset(mb, 0, sizeof *mb);
}

void minibatch_build_transpose(minibatch *mb) {
    for (int l = 0; l < mb->num_layers; l++) {
        sampler_block *b = &mb->blocks[l];
        int64_t *tp = b->t_indptr;
        memset(tp, 0, (size_t)(b->num_src + 1) * sizeof(int64_t));
        for (int64_t e = 0; e < b->num_edges; e++) tp[b->indices[e] + 1]++;
        for (int64_t j = 0; j < b->num_src; j++) tp[j + 1] += tp[j];
        /* place edges: walking dst in order keeps dst ids ascending per source */
        for (int64_t i = 0; i < b->num_dst; i++)
            for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
                int64_t p = tp[b->indices[e]]++;
                b->t_indices[p] = (int32_t)i;
                b->t_eid[p] = (int32_t)e;
            }
        /* tp[j] now holds the end of source j's range: shift back */
        for (int64_t j = b->num_src; j > 0; j--) tp[j] = tp[j - 1];
        tp[0] = 0;
    }
}
