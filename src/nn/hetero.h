/* hetero.h — the typed models' side of model.h (HeteroSAGE, RGCN); private to src/nn: callers
 * use model_init / model_forward / model_typed_backward, which dispatch here for typed kinds. */
#ifndef CGNN_HETERO_H
#define CGNN_HETERO_H

#include "nn/model.h"

int hetero_init(model *m, const model_config *cfg, const minibatch_capacity *cap, uint64_t seed, cgnn_err *err);
void hetero_free(model *m); /* frees m->types and m->hscratch; NULL-safe parts */
const float *hetero_forward(model *m, const minibatch *mb, int training, uint64_t dropout_key);

#endif
