/* config_value.h — the values of the config's YAML nodes, read strictly, and the messages about
 * them: what the config module's files share (config.c, config_args.c, config_validate.c). Not for
 * use outside src/train/config*.c. Every error is CGNN_ERR_INPUT, "FILE: PATH (line N): what is
 * wrong", and every function that fails returns -1 with it in *err. */
#ifndef CGNN_CONFIG_VALUE_H
#define CGNN_CONFIG_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "io/yamldoc.h"
#include "train/config.h"
#include "train/config_args.h"

/* "FILE: PATH (line N): <fmt>" about node n. Returns -1. */
__attribute__((format(printf, 4, 5))) int config_node_err(const yamldoc *doc, const yamldoc_node *n, cgnn_err *err,
                                                          const char *fmt, ...);
/* A node for messages: a scalar's text quoted and shortened into buf, or "a list" / "a mapping". */
const char *config_shown(const yamldoc_node *n, char *buf, size_t cap);
/* 1 for an absent node or an unquoted empty / ~ / null scalar (YAML's null: "not given"). */
int config_is_null(const yamldoc_node *n);
/* Appends a note for cgnn train to log (nt may be NULL). Past CONFIG_MAX_NOTES the last line says
 * notes were left out. */
__attribute__((format(printf, 2, 3))) void config_note(config_notes *nt, const char *fmt, ...);

/* An integer in [lo, hi]. */
int config_arg_int(const yamldoc *doc, const yamldoc_node *n, int64_t lo, int64_t hi, int64_t *out, cgnn_err *err);
/* A finite number in the interval lo..hi, each end excluded when *_open; hi = INFINITY for no
 * upper bound. Numbers that float32 rounds to 0 or infinity are refused. */
int config_arg_double(const yamldoc *doc, const yamldoc_node *n, double lo, int lo_open, double hi, int hi_open,
                      double *out, cgnn_err *err);
/* true / false in any case. */
int config_arg_bool(const yamldoc *doc, const yamldoc_node *n, int *out, cgnn_err *err);
/* A byte count: an integer, optionally with K, M, G or T (B / iB optional; powers of 1024). */
int config_arg_bytes(const yamldoc *doc, const yamldoc_node *n, int64_t *out, cgnn_err *err);

/* Stores the value of row r's argument in its field of *a: iv (INT, BOOL, BYTES, CHOICE) or dv
 * (REAL); nothing for a SPECIAL row. */
void config_arg_set(trainer_args *a, const targ_row *r, int64_t iv, double dv);
/* Reads n, the value of the argument of row r, into x->a as the row says (its type, bounds and
 * field, or its reader), and sets the row's given flag. */
int config_arg_read(const targ_ctx *x, const targ_row *r, const yamldoc_node *n);

/* 1 if a and b are the same edge type. */
int config_edge_type_eq(const config_edge_type *a, const config_edge_type *b);

#endif
