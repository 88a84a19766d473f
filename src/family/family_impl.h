/* family_impl.h — what one model family provides (family_block.c, family_typed.c,
 * family_lightgcn.c) and the helpers they share (model_family.c). Not for callers of
 * family/model_family.h: model_family.c calls these through the family's table, and each
 * model_family_X function's contract is the header's. An entry may be NULL: the default written
 * beside it is what model_family.c does then.
 */
#ifndef CGNN_FAMILY_IMPL_H
#define CGNN_FAMILY_IMPL_H

#include "family/model_family.h"

typedef struct model_family_ops {
    model_family_kind kind;
    int (*open)(model_family *f, const ds_feature *feat, cgnn_err *err);          /* required */
    void (*loader_config)(const model_family *f, loader_config *lc);              /* required */
    /* the model, dout and the family's buffers (model_family.c adds the gradient hooks) */
    int (*build)(model_family *f, const model_family_loaders *ls, int64_t out_dim, cgnn_err *err); /* required */
    void (*begin_eval)(model_family *f);                                          /* NULL: nothing */
    const float *(*forward)(model_family *f, minibatch *mb, int training, uint64_t key); /* required */
    double (*regularize)(model_family *f, const minibatch *mb);                   /* NULL: 0 */
    void (*backward)(model_family *f, const minibatch *mb);                       /* required (mb != NULL) */
    /* the tables' sparse steps at each table's rate lr[i] */
    int (*step_tables)(model_family *f, const minibatch *mb, const double *lr, double divisor,
                       cgnn_err *err);                                            /* NULL: no tables */
    void (*infer_input)(model_family *f, infer_input *in);                        /* NULL: refused (bug) */
    void (*fingerprint)(const model_family *f, train_state_fingerprint *fp);      /* NULL: nothing */
    void (*free)(model_family *f);                                                /* NULL: nothing */
} model_family_ops;

extern const model_family_ops family_block_ops, family_typed_ops, family_lightgcn_ops;

/* ---- shared by the families (model_family.c) ---- */

int model_family_is_root(const model_family *f);

/* After a table's embedding_init (tables[i].e): trainerArgs' init std and weight decay, the best
 * copy, and the keys "<prefix>.weight", .m, .v, .best. Returns 0 or -1 with *err naming the
 * config field. */
int model_family_table_setup(model_family *f, int i, const char *prefix, int via_source, cgnn_err *err);

/* trainerArgs.embedding_optim as the table's optimiser. */
embedding_optim model_family_table_optim(const trainer_args *a);

/* The block families (block, lightgcn): shared by family_block.c and family_lightgcn.c. */
int family_block_open(model_family *f, const ds_feature *feat, cgnn_err *err);
void family_block_loader_config(const model_family *f, loader_config *lc);
/* mc: the model's configuration (family_block_model_config, then the family's additions) */
int family_block_build_model(model_family *f, const model_family_loaders *ls, model_config *mc,
                             minibatch_capacity *cap, cgnn_err *err);
void family_block_model_config(const model_family *f, int64_t out_dim, model_config *mc);
void family_block_log(const model_family *f, const model_family_loaders *ls);
void family_block_infer_input(model_family *f, infer_input *in);

#endif
