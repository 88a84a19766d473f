/* minibatch.c — worst-case allocation of a minibatch; see minibatch.h. */
#include "sample/minibatch.h"

#include <stdlib.h>
#include <string.h>

int minibatch_alloc(minibatch *mb, const minibatch_capacity *cap, cgnn_err *err) {
    memset(mb, 0, sizeof *mb);
    mb->cap = *cap;
    const int L = cap->num_layers;
    CGNN_CHECK(L >= 0 && L <= MINIBATCH_MAX_LAYERS); /* 0: the seeds alone, no block */
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

/* Allocates one block's buffers for up to max_dst dst, max_src src and max_edges edges. */
static int block_alloc(sampler_block *b, int64_t max_dst, int64_t max_src, int64_t max_edges) {
    b->indptr = malloc((size_t)(max_dst + 1) * sizeof(int64_t));
    b->indices = malloc((size_t)(max_edges + 1) * sizeof(int32_t));
    b->t_indptr = malloc((size_t)(max_src + 1) * sizeof(int64_t));
    b->t_indices = malloc((size_t)(max_edges + 1) * sizeof(int32_t));
    b->t_eid = malloc((size_t)(max_edges + 1) * sizeof(int32_t));
    return b->indptr && b->indices && b->t_indptr && b->t_indices && b->t_eid;
}

static void block_free(sampler_block *b) {
    free(b->indptr);
    free(b->indices);
    free(b->t_indptr);
    free(b->t_indices);
    free(b->t_eid);
}

int minibatch_alloc_typed(minibatch *mb, const minibatch_capacity *cap, const minibatch_typed_capacity *tcap,
                          const int *etype_src, const int *etype_dst, cgnn_err *err) {
    memset(mb, 0, sizeof *mb);
    mb->cap = *cap;
    const int L = cap->num_layers, T = tcap->num_node_types, K = tcap->num_edge_types;
    CGNN_CHECK(L >= 1 && L <= MINIBATCH_MAX_LAYERS && T >= 1 && T <= MINIBATCH_MAX_NODE_TYPES && K >= 1 &&
               K <= MINIBATCH_MAX_EDGE_TYPES);
    minibatch_typed *ty = calloc(1, sizeof *ty);
    int ok = ty != NULL;
    mb->typed = ty;
    mb->items = malloc((size_t)(cap->max_items + 1) * sizeof(int64_t));
    mb->item_local = malloc((size_t)(cap->max_items + 1) * sizeof(int32_t));
    mb->labels = malloc((size_t)(cap->max_items + 1) * sizeof(int64_t));
    mb->listed_off = malloc((size_t)(cap->max_items + 1) * sizeof(int64_t));
    mb->listed_len = malloc((size_t)(cap->max_items + 1) * sizeof(int64_t));
    ok = ok && mb->items && mb->item_local && mb->labels && mb->listed_off && mb->listed_len;
    if (ok) {
        ty->cap = *tcap;
        ty->num_node_types = T;
        ty->num_edge_types = K;
        ty->num_layers = L;
        for (int e = 0; e < K; e++) {
            CGNN_CHECK(etype_src[e] >= 0 && etype_src[e] < T && etype_dst[e] >= 0 && etype_dst[e] < T);
            ty->etype_src[e] = etype_src[e];
            ty->etype_dst[e] = etype_dst[e];
        }
        ty->blocks = calloc((size_t)L * (size_t)K, sizeof(sampler_block));
        ok = ty->blocks != NULL;
    }
    int64_t all_seeds = 0;
    for (int t = 0; t < T; t++) all_seeds += tcap->max_nodes[t][0];
    if (ok) { /* typed link prediction: the homogenised ids of the stacked seed rows */
        mb->input_nodes = malloc((size_t)(all_seeds + 1) * sizeof(int64_t));
        ok = mb->input_nodes != NULL;
    }
    for (int t = 0; t < T && ok; t++) {
        ty->nodes[t] = malloc((size_t)(tcap->max_nodes[t][L] + 1) * sizeof(int64_t));
        ty->feat_dim[t] = tcap->feat_dim[t];
        if (tcap->feat_dim[t] > 0)
            ty->features[t] = malloc((size_t)(tcap->max_nodes[t][L] + 1) * (size_t)tcap->feat_dim[t] * sizeof(float));
        ok = ty->nodes[t] && (tcap->feat_dim[t] == 0 || ty->features[t]);
    }
    /* hop h fills layer L-1-h */
    for (int h = 0; h < L && ok; h++)
        for (int e = 0; e < K && ok; e++)
            ok = block_alloc(&ty->blocks[(L - 1 - h) * K + e], tcap->max_nodes[etype_dst[e]][h],
                             tcap->max_nodes[etype_src[e]][h + 1], tcap->max_edges[h][e]);
    if (!ok) {
        minibatch_free(mb);
        return err_set(err, CGNN_ERR_RUNTIME, "out of memory allocating typed mini-batch buffers");
    }
    mb->num_layers = L;
    return 0;
}

static void typed_free(minibatch_typed *ty) {
    if (!ty) return;
    for (int t = 0; t < MINIBATCH_MAX_NODE_TYPES; t++) {
        free(ty->nodes[t]);
        free(ty->features[t]);
    }
    if (ty->blocks)
        for (int i = 0; i < ty->num_layers * ty->num_edge_types; i++) block_free(&ty->blocks[i]);
    free(ty->blocks);
    free(ty);
}

void minibatch_free(minibatch *mb) {
    if (!mb) return;
    typed_free(mb->typed);
    free(mb->items);
    free(mb->item_local);
    free(mb->labels);
    free(mb->listed_off);
    free(mb->listed_len);
    free(mb->input_nodes);
    free(mb->features);
    for (int l = 0; l < MINIBATCH_MAX_LAYERS; l++) block_free(&mb->blocks[l]);
    memset(mb, 0, sizeof *mb);
}

void minibatch_build_transpose(minibatch *mb) {
    if (mb->typed) {
        const minibatch_typed *ty = mb->typed;
        for (int i = 0; i < ty->num_layers * ty->num_edge_types; i++) minibatch_block_transpose(&ty->blocks[i]);
        return;
    }
    for (int l = 0; l < mb->num_layers; l++) minibatch_block_transpose(&mb->blocks[l]);
}

void minibatch_block_transpose(sampler_block *b) {
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
