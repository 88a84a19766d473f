/* hetero.h — the typed models' side of model.h (HeteroSAGE, RGCN here; HGT in nn/hgt.c, reached
 * through these); private to src/nn: callers use model_init / model_forward /
 * model_typed_backward, which dispatch here for typed kinds. */
#ifndef CGNN_HETERO_H
#define CGNN_HETERO_H

#include "nn/model.h"

int hetero_init(model *m, const model_config *cfg, const minibatch_capacity *cap, uint64_t seed, cgnn_err *err);
void hetero_free(model *m); /* frees m->types and m->hscratch; NULL-safe parts */
const float *hetero_forward(model *m, const minibatch *mb, int training, uint64_t dropout_key);

/* Shared with nn/hgt.c: appends tensor `name` (ndim 1..3, shape d0 x d1 x d2) to m's layout at
 * the end of the flat buffer; fills tensor t with U(±bound) drawn from (seed, t). */
void hetero_add_tensor(model *m, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2);
void hetero_init_uniform(model *m, int t, uint64_t seed, double bound);

#endif
