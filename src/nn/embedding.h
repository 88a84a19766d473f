/* embedding.h — learnable node embedding tables with sparse (row-wise) optimiser steps.
 *
 * Link prediction on graphs whose nodes have no features needs one learnable row per node; the
 * rows are concatenated after the node features in the model's input matrix. A batch reads and
 * updates only the rows of its input nodes, so a table of tens of millions of rows trains at the
 * speed of the batch: nothing here is O(num_rows) after embedding_init.
 *
 * Dimension legend: R = rows of the table (num_rows), D = embedding dim, n = rows touched by
 * this rank's batch, N = rows touched by all ranks together (with duplicates), U = distinct rows
 * among them.
 *
 * Optimisers (torch 1.13 semantics, element by element in float32; scalars rounded to float as
 * ATen rounds a Python number, bias corrections and the step size in double):
 *   SparseAdam (torch.optim.SparseAdam, lazy): on the rows present only,
 *       m += (g - m)(1-b1);  v += (g*g - v)(1-b2);
 *       p += -(lr sqrt(1-b2^t) / (1-b1^t)) * (m / (sqrt(v) + eps))
 *     with t the table's step counter, which counts every step taken on the table (rows absent
 *     from a step keep stale moments, exactly as torch's SparseAdam).
 *   Adagrad (torch.optim.Adagrad with sparse grads, lr_decay 0, initial_accumulator_value 0):
 *       s += g*g;  p += -lr * (g / (sqrt(s) + eps))            (s lives in m; eps 1e-10 in torch)
 *   SGD:  p += -lr * g
 * torch coalesces a sparse gradient (sums duplicate rows) before the non-linear updates; so do
 * we: every step merges duplicate ids first, summing their rows in input order.
 *
 * Weight decay (embedding_set_weight_decay, wd): torch 1.13 defines none for sparse gradients —
 * SGD(weight_decay) fails on one ("add(sparse, dense) is not supported"), Adagrad refuses it
 * ("weight_decay option is not compatible with sparse gradients") and SparseAdam has no such
 * argument. Here each optimiser applies torch's dense formula, g <- g + wd · p (the
 * `grad.add(param, alpha=weight_decay)` of torch's SGD, Adagrad and Adam), to the rows present in
 * the step only, after the merge: the lazy form, as SparseAdam is the lazy Adam — an L2 penalty
 * wd/2 ||p||² on the rows a step touches; rows no batch reaches do not decay. The fixtures replay
 * torch's optimisers with exactly that gradient.
 *
 * Data parallelism: every rank holds the whole table (a replica). embedding_sparse_step
 * all-gathers every rank's (ids, grads), merges them in rank order, scales by 1/divisor and
 * applies the same update on every rank — the replicas stay bitwise identical.
 *
 * Determinism: initialisation draws row r from the stream rng_key(seed, r); the merge is a
 * sequential hash pass (order of first appearance, sums in input order); updates are
 * element-wise, parallel over distinct rows. Results never depend on the thread count, and the
 * fast kernels give the bits of the plain reference embedding_apply_ref.
 *
 * Memory: weight is R*D floats, written at init. Optimiser state (2 R*D floats for SparseAdam,
 * R*D for Adagrad, none for SGD) is anonymous zero-filled memory mapped at init whose pages the
 * kernel supplies on first write: only the pages of rows ever updated become resident. Step
 * scratch grows to the largest step seen and is then reused (no allocation in steady state).
 */
#ifndef CGNN_EMBEDDING_H
#define CGNN_EMBEDDING_H

#include <stddef.h>
#include <stdint.h>

#include "dist/dist.h"
#include "util/err.h"

typedef enum embedding_optim { EMB_OPTIM_SPARSE_ADAM, EMB_OPTIM_ADAGRAD, EMB_OPTIM_SGD, EMB_OPTIM_COUNT } embedding_optim;

/* torch class name of kind ("SparseAdam", "Adagrad", "SGD"). */
const char *embedding_optim_name(embedding_optim kind);
/* "SparseAdam", "torch.optim.SparseAdam", "Adagrad", "SGD" -> kind; returns 0 or -1. */
int embedding_optim_parse(const char *name, embedding_optim *out);

/* Per-step work space, private to embedding.c (grown on demand, owned by the table). */
typedef struct embedding_scratch embedding_scratch;

typedef struct embedding_table {
    int64_t num_rows, dim;    /* R, D */
    float *weight;            /* (R, D) owned; N(0, 1) like torch.nn.Embedding */
    embedding_optim kind;
    double lr;                /* the base learning rate given at init (each step passes its own lr) */
    double beta1, beta2, eps; /* SparseAdam betas; eps of SparseAdam / Adagrad */
    float *m, *v;             /* (R, D) SparseAdam exp_avg / exp_avg_sq; Adagrad state_sum in m
                                 (v NULL); both NULL for SGD. Owned, lazily backed (see above) */
    double weight_decay;      /* lazy weight decay of the touched rows (0 = off; see above) */
    int64_t step;             /* optimiser steps taken on the table */
    size_t state_map_bytes;   /* bytes mapped for each of m and v */
    embedding_scratch *scratch; /* owned */
} embedding_table;

/* Allocates and initialises an (num_rows, dim) table: row r is drawn N(0, 1) from the stream
 * rng_key(seed, r) (parallel over rows; the same bits for any thread count, and row r is the
 * same for any num_rows), optimiser state zero. Validates like torch's constructors: num_rows
 * and dim >= 1; SparseAdam: lr > 0, eps > 0, betas in [0, 1); Adagrad: lr >= 0, eps >= 0;
 * SGD: lr >= 0. Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the bad value; CGNN_ERR_RUNTIME
 * when out of memory). Caller owns *e (embedding_free); on failure *e owns nothing. */
int embedding_init(embedding_table *e, int64_t num_rows, int64_t dim, uint64_t seed, embedding_optim kind,
                   double lr, double beta1, double beta2, double eps, cgnn_err *err);
void embedding_free(embedding_table *e); /* NULL-safe */

/* Multiplies every row by std (> 0, finite): rows drawn N(0, 1) become N(0, std²) — torch's
 * nn.init.normal_(weight, std=std), LightGCN's init with std = 0.1. Row r is (float)(std · z)
 * for its N(0, 1) draw z (rounded to float first), so std = 1 changes nothing. Call before the
 * first step. Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the value). */
int embedding_scale_init(embedding_table *e, double std, cgnn_err *err);
/* Sets the lazy weight decay (wd >= 0, finite; see the top of this file). Returns 0 or -1 with
 * *err. */
int embedding_set_weight_decay(embedding_table *e, double wd, cgnn_err *err);

/* LightGCN's regularisation of the embedding rows a batch reads (its `reg_loss`,
 * reg · ½ (||users||² + ||positives||² + ||negatives||²) / batch, summed over the batch's
 * (user, positive, negative) rows with repeats; kuandeng/LightGCN, gusye1234/LightGCN-PyTorch):
 * for each of the n slots, row slots[s] of the gathered input matrix — its embedding at
 * rows + slots[s] * stride + col, D wide — adds ½ coef ||row||² to the returned value and
 * coef · row to the same place of grads (a row several slots use counts once per slot).
 * coef = reg / batch size. Serial in slot order (deterministic). Returns the value. */
double embedding_batch_l2(float *grads, const float *rows, const int32_t *slots, int64_t n, int64_t stride,
                          int64_t col, int64_t D, double coef);

/* Writes rows ids[0..n) of the table into out: row i lands at out[i*stride + col ..
 * i*stride + col + D), so the embeddings sit next to gathered features in one (n, F + D) input
 * matrix (stride = F + D, col = F). Parallel over rows. ids must be in [0, R) (checked: a bad id
 * is a bug of the caller, whose ids are the graph's nodes). */
void embedding_gather(const embedding_table *e, const int64_t *ids, int64_t n, float *out, int64_t stride,
                      int64_t col);

/* One sparse optimiser step at learning rate lr. ids[0..n) are this rank's touched rows
 * (normally distinct: a minibatch's input nodes), gradient row i at grads + i*stride + col (the
 * embedding columns of d(loss)/d(input), stride >= col + D). Under data parallelism (d->size >
 * 1) every rank's (ids, grads) are all-gathered; a rank without a batch joins with n = 0 (ids
 * and grads may then be NULL). Rows
 * with the same id are summed in rank order, then multiplied by (float)(1 / divisor) (the
 * number of ranks that had a batch, like the dense gradient mean; the same on every rank), and
 * every rank applies the same update. d NULL or d->size == 1: no communication.
 * Advances e->step (also when no rank touched a row, as torch steps an empty sparse grad).
 * Returns 0, or -1 with *err (CGNN_ERR_INPUT naming the bad id) when an id is outside [0, R):
 * then nothing is updated and the step is not counted, on every rank alike (ids are checked
 * after the all-gather, so all ranks return the same status). Collective when d->size > 1. */
int embedding_sparse_step(embedding_table *e, const dist_ctx *d, const int64_t *ids, const float *grads, int64_t n,
                          int64_t stride, int64_t col, double lr, double divisor, cgnn_err *err);

/* ---- sharded by part (a partitioned graph, graph/partbook.h) ---------------------------
 * Each rank holds the rows of its part only: global ids [part_start[part], part_start[part+1]),
 * local row = id - part_start[part]; rank r holds part r % num_parts (ranks sharing a part hold
 * identical replicas of it). The forward pass reads remote rows like remote features
 * (sample/gather.h: gather_rows_part over a float32 view of the table). */
typedef struct embedding_shard {
    int num_parts, part;
    const int64_t *part_start; /* (num_parts + 1) global id ranges */
} embedding_shard;

/* embedding_init whose row r is drawn from the stream rng_key(seed, key_ids[r]) (key_ids NULL:
 * r): a shard keyed by its rows' original ids holds exactly the rows of the whole table. */
int embedding_init_keyed(embedding_table *e, int64_t num_rows, int64_t dim, uint64_t seed, const int64_t *key_ids,
                         embedding_optim kind, double lr, double beta1, double beta2, double eps, cgnn_err *err);

/* embedding_sparse_step on a sharded table: ids are global ids; each (id, gradient row) goes to
 * every rank holding the id's part (one all-to-all), arriving in source-rank order and, from one
 * rank, in input order, so every row is summed in the order of the replicated step's
 * all-gather and gets the same bits. Collective over every rank of d, even one without rows
 * (n = 0). An id outside the graph on any rank: every rank returns -1 (CGNN_ERR_INPUT) and
 * nothing changes. Ends with a barrier: when it returns, every rank has applied the step, so
 * remote reads of rows (sample/part_rpc) see it. */
int embedding_sparse_step_sharded(embedding_table *e, const dist_ctx *d, const embedding_shard *sh,
                                  const int64_t *ids, const float *grads, int64_t n, int64_t stride, int64_t col,
                                  double lr, double divisor, cgnn_err *err);

/* The plain, serial reference of the update: applies one step at lr for already merged
 * gradients — distinct ids[0..n), grads (n, D) contiguous — and advances e->step. The tests
 * hold embedding_sparse_step to its bits. */
void embedding_apply_ref(embedding_table *e, const int64_t *ids, const float *grads, int64_t n, double lr);

/* Bytes the table has allocated: weight + optimiser state (mapped size, of which only pages of
 * touched rows are resident) + step scratch. */
int64_t embedding_state_bytes(const embedding_table *e);
/* Of those, the optimiser state's mapped bytes (m and v together). */
int64_t embedding_optim_state_bytes(const embedding_table *e);

#endif
