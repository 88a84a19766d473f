/* config_value.c — the values of the config's YAML nodes, read strictly (see config_value.h), and
 * the special trainer arguments' readers that config_args.h names: num_neighbors in its three
 * forms (one list; GiGL's per-edge-type dict string; a YAML mapping), task_path, lightgcn_alpha,
 * the optimiser and scheduler names, early_stop_criterion, ...
 * Every error is CGNN_ERR_INPUT, "FILE: PATH (line N): what is wrong".
 */
#include "train/config_value.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "train/lp_eval.h"

_Static_assert(CONFIG_MAX_LAYERS == sizeof ((trainer_args *)0)->fanouts / sizeof(int64_t),
               "fanouts[] holds one fanout per layer");

/* ---- messages ------------------------------------------------------------------------------- */

int config_node_err(const yamldoc *doc, const yamldoc_node *n, cgnn_err *err, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): %s", doc->file,
                   n->path[0] ? n->path : "top level", n->line, msg);
}

const char *config_shown(const yamldoc_node *n, char *buf, size_t cap) {
    if (n->kind != YAMLDOC_SCALAR) return n->kind == YAMLDOC_SEQUENCE ? "a list" : "a mapping";
    if (strlen(n->scalar) > 60)
        snprintf(buf, cap, "'%.57s...'", n->scalar);
    else
        snprintf(buf, cap, "'%s'", n->scalar);
    return buf;
}

int config_is_null(const yamldoc_node *n) {
    if (!n) return 1;
    if (n->kind != YAMLDOC_SCALAR || n->quoted) return 0;
    const char *s = n->scalar;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

void config_note(config_notes *nt, const char *fmt, ...) {
    if (!nt || nt->n >= CONFIG_MAX_NOTES) return;
    if (nt->n == CONFIG_MAX_NOTES - 1) {
        snprintf(nt->line[nt->n++], CONFIG_NOTE_MAX, "(more notes about the config were left out)");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(nt->line[nt->n++], CONFIG_NOTE_MAX, fmt, ap);
    va_end(ap);
}

/* ---- strict typed values -------------------------------------------------------------------- */

int config_arg_int(const yamldoc *doc, const yamldoc_node *n, int64_t lo, int64_t hi, int64_t *out,
                   cgnn_err *err) {
    char buf[80];
    int64_t v;
    if (yamldoc_parse_int(n->scalar, &v) != 0)
        return config_node_err(doc, n, err, "expected an integer, got %s", config_shown(n, buf, sizeof buf));
    if (v < lo || v > hi) {
        if (hi == INT64_MAX)
            return config_node_err(doc, n, err, "must be >= %lld, got %lld", (long long)lo, (long long)v);
        return config_node_err(doc, n, err, "must be in [%lld, %lld], got %lld", (long long)lo,
                               (long long)hi, (long long)v);
    }
    *out = v;
    return 0;
}

/* A finite number in the interval lo..hi; lo_open/hi_open make that end exclusive;
 * hi = INFINITY for no upper bound. */
int config_arg_double(const yamldoc *doc, const yamldoc_node *n, double lo, int lo_open, double hi,
                      int hi_open, double *out, cgnn_err *err) {
    char buf[80];
    double v;
    if (yamldoc_parse_double(n->scalar, &v) != 0)
        return config_node_err(doc, n, err, "expected a number, got %s", config_shown(n, buf, sizeof buf));
    if (!isfinite(v))
        return config_node_err(doc, n, err, "must be a finite number, got %s", config_shown(n, buf, sizeof buf));
    /* the training math is float32: a value that float32 rounds to 0 or infinity (1e-300, 1e39)
     * would pass a double range check and then divide by zero or overflow */
    if (fabs(v) > FLT_MAX)
        return config_node_err(doc, n, err, "%s is too large for float32 (at most %g)",
                               config_shown(n, buf, sizeof buf), FLT_MAX);
    if (v != 0 && fabs(v) < FLT_MIN)
        return config_node_err(doc, n, err, "%s is too small for float32 (0, or at least %g in magnitude)",
                               config_shown(n, buf, sizeof buf), FLT_MIN);
    int ok = (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
    if (!ok) {
        if (isinf(hi))
            return config_node_err(doc, n, err, "must be %s %g, got %s", lo_open ? ">" : ">=", lo,
                                   config_shown(n, buf, sizeof buf));
        return config_node_err(doc, n, err, "must be in %c%g, %g%c, got %s", lo_open ? '(' : '[', lo, hi,
                               hi_open ? ')' : ']', config_shown(n, buf, sizeof buf));
    }
    *out = v;
    return 0;
}

int config_arg_bool(const yamldoc *doc, const yamldoc_node *n, int *out, cgnn_err *err) {
    char buf[80];
    if (yamldoc_parse_bool(n->scalar, out) != 0)
        return config_node_err(doc, n, err, "expected true or false, got %s", config_shown(n, buf, sizeof buf));
    return 0;
}

/* A byte count: an integer, optionally followed by K, M, G or T (with or without B / iB;
 * powers of 1024 throughout), as GLT's cache_memory_budget. */
int config_arg_bytes(const yamldoc *doc, const yamldoc_node *n, int64_t *out, cgnn_err *err) {
    char buf[80], num[64];
    const char *s = n->scalar;
    size_t k = 0;
    while (s[k] >= '0' && s[k] <= '9' && k < sizeof num - 1) num[k] = s[k], k++;
    num[k] = '\0';
    const char *u = s + k;
    while (*u == ' ') u++;
    int shift = 0;
    if (*u == 'K' || *u == 'k') shift = 10;
    else if (*u == 'M' || *u == 'm') shift = 20;
    else if (*u == 'G' || *u == 'g') shift = 30;
    else if (*u == 'T' || *u == 't') shift = 40;
    if (shift) u++;
    if (shift && *u == 'i') u++;
    if (*u == 'B' || *u == 'b') u++;
    int64_t v;
    if (k == 0 || *u || yamldoc_parse_int(num, &v) != 0 || v < 0 || v > (INT64_MAX >> shift))
        return config_node_err(doc, n, err,
                               "expected a byte count (an integer, optionally with K, M, G or T: 512MB, 2GiB), "
                               "got %s",
                               config_shown(n, buf, sizeof buf));
    *out = v << shift;
    return 0;
}

/* ---- a trainer argument as its row says (config_args.h) ------------------------------------- */

void config_arg_set(trainer_args *a, const targ_row *r, int64_t iv, double dv) {
    char *field = (char *)a + r->off;
    if (r->type == TARG_TYPE_SPECIAL) return;
    if (r->type == TARG_TYPE_REAL) {
        CGNN_CHECK(r->size == sizeof dv);
        memcpy(field, &dv, sizeof dv);
    } else if (r->size == sizeof(int)) {
        const int i = (int)iv;
        memcpy(field, &i, sizeof i);
    } else {
        CGNN_CHECK(r->size == sizeof iv);
        memcpy(field, &iv, sizeof iv);
    }
}

/* One of the row's names (exactly) into *value, or an error saying what is expected. */
static int arg_choice(const targ_ctx *x, const targ_row *r, const yamldoc_node *n, int64_t *value) {
    for (const targ_choice *c = r->choices; c->name; c++)
        if (!strcmp(n->scalar, c->name)) {
            *value = c->value;
            return 0;
        }
    char buf[80];
    return config_node_err(x->doc, n, x->err, "expected %s, got %s", r->expect, config_shown(n, buf, sizeof buf));
}

int config_arg_read(const targ_ctx *x, const targ_row *r, const yamldoc_node *n) {
    const yamldoc *doc = x->doc;
    int64_t iv = 0;
    double dv = 0;
    int b, rc = 0;
    switch (r->type) {
    case TARG_TYPE_INT: rc = config_arg_int(doc, n, r->lo, r->hi, &iv, x->err); break;
    case TARG_TYPE_REAL: rc = config_arg_double(doc, n, r->rlo, r->lo_open, r->rhi, r->hi_open, &dv, x->err); break;
    case TARG_TYPE_BOOL:
        rc = config_arg_bool(doc, n, &b, x->err);
        iv = b;
        break;
    case TARG_TYPE_BYTES: rc = config_arg_bytes(doc, n, &iv, x->err); break;
    case TARG_TYPE_CHOICE: rc = arg_choice(x, r, n, &iv); break;
    case TARG_TYPE_SPECIAL: rc = r->read(x, n); break;
    }
    if (rc != 0) return -1;
    config_arg_set(x->a, r, iv, dv);
    if (r->given_off) {
        const int one = 1;
        memcpy((char *)x->a + r->given_off, &one, sizeof one);
    }
    return 0;
}

/* ---- fanouts (num_neighbors) ------------------------------------------------------------- */

/* Parses one fanout token (trimmed by the caller) into *out: -1 or >= 1, or also 0 when
 * allow_zero (the per-edge-type form: an edge type not sampled at that hop). `what` prefixes the
 * message ("" or "edge type (a, b, c): "). */
static int fanout_value(const yamldoc *doc, const yamldoc_node *n, const char *what, const char *tok, int index,
                        int allow_zero, int64_t *out, cgnn_err *err) {
    int64_t v;
    if (yamldoc_parse_int(tok, &v) != 0)
        return config_node_err(doc, n, err, "%sentry %d: expected an integer, got '%.40s'", what, index, tok);
    if ((v == 0 && !allow_zero) || v < -1 || v > INT32_MAX)
        return config_node_err(doc, n, err, "%sentry %d is %lld: a fanout is -1 (all neighbours)%s or between 1 and %d",
                               what, index, (long long)v, allow_zero ? ", 0 (not sampled at that hop)" : "", INT32_MAX);
    *out = v;
    return 0;
}

/* A fanout list: "[15, 10]", "15, 10", "15" or a YAML list of integers (n a scalar or a
 * sequence). Stores up to CONFIG_MAX_LAYERS fanouts and the number of entries in *count. */
static int arg_fanout_list(const yamldoc *doc, const yamldoc_node *n, const char *what, int allow_zero,
                           int64_t *fanouts, int *count, cgnn_err *err) {
    *count = 0;
    if (n->kind == YAMLDOC_SEQUENCE) {
        if (n->len == 0) return config_node_err(doc, n, err, "%sempty list (one fanout per layer)", what);
        for (int i = 0; i < n->len; i++) {
            const yamldoc_node *it = n->items[i];
            if (it->kind != YAMLDOC_SCALAR) return config_node_err(doc, it, err, "%sexpected an integer fanout", what);
            int64_t v = 0;
            if (fanout_value(doc, n, what, it->scalar, i, allow_zero, &v, err) != 0) return -1;
            if (i < CONFIG_MAX_LAYERS) fanouts[i] = v;
        }
        *count = n->len;
        return 0;
    }
    if (n->kind != YAMLDOC_SCALAR) {
        char buf[80];
        return config_node_err(doc, n, err, "%sexpected a list of fanouts, got %s", what,
                               config_shown(n, buf, sizeof buf));
    }
    const char *s = n->scalar, *e = s + strlen(s);
    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    int has_open = s < e && *s == '[', has_close = e > s && e[-1] == ']';
    if (has_open != has_close) return config_node_err(doc, n, err, "%sunbalanced brackets in '%.60s'", what, n->scalar);
    if (has_open) s++, e--;
    const char *p = s;
    int i = 0;
    for (;;) {
        const char *q = p;
        while (q < e && *q != ',') q++;
        const char *a = p, *b = q;
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        if (a == b) {
            if (i == 0 && q == e) return config_node_err(doc, n, err, "%sempty list (one fanout per layer)", what);
            return config_node_err(doc, n, err, "%sentry %d is empty", what, i);
        }
        char tok[32];
        if ((size_t)(b - a) >= sizeof tok)
            return config_node_err(doc, n, err, "%sentry %d: expected an integer, got '%.*s'", what, i, 20, a);
        memcpy(tok, a, (size_t)(b - a));
        tok[b - a] = '\0';
        int64_t v = 0;
        if (fanout_value(doc, n, what, tok, i, allow_zero, &v, err) != 0) return -1;
        if (i < CONFIG_MAX_LAYERS) fanouts[i] = v;
        i++;
        if (q == e) break;
        p = q + 1;
    }
    *count = i;
    return 0;
}

char *config_edge_type_name(const config_edge_type *et, char *out, size_t cap) {
    snprintf(out, cap, "%s:%s:%s", et->src_node_type, et->relation, et->dst_node_type);
    return out;
}

int config_edge_type_eq(const config_edge_type *a, const config_edge_type *b) {
    return !strcmp(a->src_node_type, b->src_node_type) && !strcmp(a->relation, b->relation) &&
           !strcmp(a->dst_node_type, b->dst_node_type);
}

/* "(src, rel, dst): " for messages about one edge type's list. */
static void etype_prefix(const config_edge_type *et, char *out, size_t cap) {
    snprintf(out, cap, "edge type (\"%s\", \"%s\", \"%s\"): ", et->src_node_type, et->relation, et->dst_node_type);
}

/* Adds edge type et with fanouts f[count] as entry a->num_etype_fanouts (n: the node for
 * messages; `where` says which entry, e.g. "2" or "2 (line 7)"): checks the length against
 * num_layers, refuses a second entry for the same edge type and more than
 * CONFIG_MAX_ETYPE_FANOUTS entries. */
static int add_etype_fanout(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int layers_given,
                            const config_edge_type *et, const int64_t *f, int count, const char *where,
                            cgnn_err *err) {
    char pre[3 * CONFIG_TYPE_NAME_MAX + 32];
    etype_prefix(et, pre, sizeof pre);
    if (count != a->num_layers)
        return config_node_err(doc, n, err,
                               "%s%d fanout%s given but num_layers is %d%s: one fanout per layer, seed-side first", pre,
                               count, count == 1 ? "" : "s", a->num_layers, layers_given ? "" : " (the default)");
    for (int i = 0; i < a->num_etype_fanouts; i++)
        if (config_edge_type_eq(&a->etype_fanouts[i].etype, et))
            return config_node_err(doc, n, err, "%sgiven twice (entries %d and %s); give each edge type once", pre, i,
                                   where);
    if (a->num_etype_fanouts >= CONFIG_MAX_ETYPE_FANOUTS)
        return config_node_err(doc, n, err, "more than %d edge types (entry %s); cgnn takes at most %d",
                               CONFIG_MAX_ETYPE_FANOUTS, where, CONFIG_MAX_ETYPE_FANOUTS);
    config_etype_fanout *dst = &a->etype_fanouts[a->num_etype_fanouts++];
    dst->etype = *et;
    for (int h = 0; h < CONFIG_MAX_LAYERS; h++) dst->fanouts[h] = h < count ? f[h] : 0;
    return 0;
}

/* Checks a type name taken from a fanout key: non-empty, fits, no ':' (the dataset's edge type
 * names join the three parts with ':'). */
static int check_type_name(const yamldoc *doc, const yamldoc_node *n, const char *name, size_t len,
                           const char *where, cgnn_err *err) {
    if (len == 0) return config_node_err(doc, n, err, "%s: empty type name", where);
    if (len >= CONFIG_TYPE_NAME_MAX)
        return config_node_err(doc, n, err, "%s: type name '%.40s...' is too long (at most %d characters)", where, name,
                               CONFIG_TYPE_NAME_MAX - 1);
    if (memchr(name, ':', len))
        return config_node_err(doc, n, err,
                               "%s: type name '%.*s' contains ':' (it separates the parts of an edge type)", where,
                               (int)(len > 60 ? 60 : len), name);
    return 0;
}

/* GiGL's string form of a per-edge-type fanout, the str() of a Python
 * dict[tuple[str, str, str], list[int]] as gigl.utils.sampling.parse_fanout reads it with
 * ast.literal_eval:  {("term", "to", "paper"): [10, 10], ('paper', 'to', 'author'): [15, 15]}
 * Strings in single or double quotes (no escapes), any whitespace (newlines too: YAML's >-),
 * trailing commas as Python allows; values are lists (not tuples) of integers. */
typedef struct fan_lexer {
    const char *s, *p; /* the whole text; the cursor */
} fan_lexer;

static void fl_ws(fan_lexer *l) {
    while (*l->p && isspace((unsigned char)*l->p)) l->p++;
}

/* Error at the cursor: "at character N (near '...')". */
__attribute__((format(printf, 5, 6))) static int fl_err(const yamldoc *doc, const yamldoc_node *n, const fan_lexer *l,
                                                        cgnn_err *err, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!*l->p)
        return config_node_err(doc, n, err, "per-edge-type fanouts: %s at the end of the text", msg);
    return config_node_err(doc, n, err, "per-edge-type fanouts: %s at character %d (near '%.20s')", msg,
                           (int)(l->p - l->s) + 1, l->p);
}

/* Expects character c (after whitespace). */
static int fl_expect(const yamldoc *doc, const yamldoc_node *n, fan_lexer *l, char c, const char *what,
                     cgnn_err *err) {
    fl_ws(l);
    if (*l->p != c) return fl_err(doc, n, l, err, "expected '%c' %s", c, what);
    l->p++;
    return 0;
}

/* A quoted name into out[CONFIG_TYPE_NAME_MAX]. */
static int fl_string(const yamldoc *doc, const yamldoc_node *n, fan_lexer *l, char *out, const char *where,
                     cgnn_err *err) {
    fl_ws(l);
    const char q = *l->p;
    if (q != '"' && q != '\'') return fl_err(doc, n, l, err, "expected a quoted type name in %s", where);
    const char *a = ++l->p;
    while (*l->p && *l->p != q && *l->p != '\\' && *l->p != '\n') l->p++;
    if (*l->p == '\\') return fl_err(doc, n, l, err, "escapes are not supported in type names (%s)", where);
    if (*l->p != q) {
        l->p = a - 1;
        return fl_err(doc, n, l, err, "unterminated string in %s", where);
    }
    const size_t len = (size_t)(l->p - a);
    if (check_type_name(doc, n, a, len, where, err) != 0) return -1;
    memcpy(out, a, len);
    out[len] = '\0';
    l->p++;
    return 0;
}

/* [int, int, ...] into f (up to CONFIG_MAX_LAYERS kept), the entry count into *count. */
static int fl_list(const yamldoc *doc, const yamldoc_node *n, fan_lexer *l, const char *pre, int64_t *f, int *count,
                   cgnn_err *err) {
    fl_ws(l);
    if (*l->p == '(') return fl_err(doc, n, l, err, "%sthe fanouts are a tuple; GiGL takes a list [...]", pre);
    if (fl_expect(doc, n, l, '[', "(the edge type's list of fanouts)", err) != 0) return -1;
    int i = 0;
    for (;;) {
        fl_ws(l);
        if (*l->p == ']') {
            if (i == 0) return fl_err(doc, n, l, err, "%sempty list (one fanout per layer)", pre);
            break;
        }
        const char *a = l->p;
        if (*l->p == '+' || *l->p == '-') l->p++;
        while (isdigit((unsigned char)*l->p)) l->p++;
        const char *b = l->p;
        char tok[32];
        if (b == a || (b - a == 1 && !isdigit((unsigned char)*a)) || isalnum((unsigned char)*l->p) ||
            *l->p == '.' || *l->p == '_' || (size_t)(b - a) >= sizeof tok) {
            l->p = a;
            return fl_err(doc, n, l, err, "%sentry %d: expected an integer", pre, i);
        }
        memcpy(tok, a, (size_t)(b - a));
        tok[b - a] = '\0';
        int64_t v = 0;
        if (fanout_value(doc, n, pre, tok, i, 1, &v, err) != 0) return -1;
        if (i < CONFIG_MAX_LAYERS) f[i] = v;
        i++;
        fl_ws(l);
        if (*l->p == ',') {
            l->p++;
            continue;
        }
        if (*l->p != ']') return fl_err(doc, n, l, err, "%sexpected ',' or ']' after entry %d", pre, i - 1);
    }
    l->p++;
    *count = i;
    return 0;
}

static int parse_etype_fanout_string(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int layers_given,
                                     cgnn_err *err) {
    fan_lexer l = {n->scalar, n->scalar};
    if (fl_expect(doc, n, &l, '{', "", err) != 0) return -1;
    for (int entry = 0;; entry++) {
        fl_ws(&l);
        if (*l.p == '}') {
            if (entry == 0) return fl_err(doc, n, &l, err, "no edge types in {}");
            break;
        }
        char where[64], index[16];
        snprintf(where, sizeof where, "edge type %d", entry);
        snprintf(index, sizeof index, "%d", entry);
        config_edge_type et;
        fl_ws(&l);
        if (*l.p != '(')
            return fl_err(doc, n, &l, err,
                          "expected '(' opening edge type %d, a tuple (\"src\", \"relation\", \"dst\")", entry);
        l.p++;
        char *parts[3] = {et.src_node_type, et.relation, et.dst_node_type};
        for (int k = 0; k < 3; k++) {
            if (fl_string(doc, n, &l, parts[k], where, err) != 0) return -1;
            fl_ws(&l);
            if (k < 2 && *l.p != ',') {
                if (*l.p == ')')
                    return fl_err(doc, n, &l, err, "edge type %d has %d name%s; it needs 3 (\"src\", \"relation\", "
                                  "\"dst\")", entry, k + 1, k ? "s" : "");
                return fl_err(doc, n, &l, err, "expected ',' between the names of edge type %d", entry);
            }
            if (k < 2) l.p++;
        }
        fl_ws(&l);
        if (*l.p == ',') l.p++; /* Python's trailing comma in a tuple */
        fl_ws(&l);
        if (*l.p != ')')
            return fl_err(doc, n, &l, err, "expected ')' closing edge type %d (it has 3 names: \"src\", \"relation\", "
                          "\"dst\")", entry);
        l.p++;
        fl_ws(&l);
        if (*l.p != ':') return fl_err(doc, n, &l, err, "expected ':' after edge type %d", entry);
        l.p++;
        char pre[3 * CONFIG_TYPE_NAME_MAX + 32];
        etype_prefix(&et, pre, sizeof pre);
        int64_t f[CONFIG_MAX_LAYERS] = {0};
        int count = 0;
        if (fl_list(doc, n, &l, pre, f, &count, err) != 0) return -1;
        if (add_etype_fanout(doc, n, a, layers_given, &et, f, count, index, err) != 0) return -1;
        fl_ws(&l);
        if (*l.p == ',') {
            l.p++;
            continue;
        }
        if (*l.p != '}') return fl_err(doc, n, &l, err, "expected ',' or '}' after the fanouts of edge type %d", entry);
    }
    l.p++;
    fl_ws(&l);
    if (*l.p) return fl_err(doc, n, &l, err, "unexpected text after the closing '}'");
    return 0;
}

/* Splits a mapping key "src:rel:dst" or "src__rel__dst" (PyG's joined form) into *et. */
static int split_etype_key(const yamldoc *doc, const yamldoc_node *n, const char *key, config_edge_type *et,
                           cgnn_err *err) {
    const char *sep = strchr(key, ':') ? ":" : "__";
    const size_t sl = strlen(sep);
    const char *p1 = strstr(key, sep), *p2 = p1 ? strstr(p1 + sl, sep) : NULL;
    if (!p1 || !p2 || strstr(p2 + sl, sep))
        return config_node_err(doc, n, err,
                               "per-edge-type fanouts: key '%.100s' is not an edge type: write it \"src:relation:dst\" "
                               "(or \"src__relation__dst\")",
                               key);
    const char *starts[3] = {key, p1 + sl, p2 + sl};
    const size_t lens[3] = {(size_t)(p1 - key), (size_t)(p2 - (p1 + sl)), strlen(p2 + sl)};
    char *parts[3] = {et->src_node_type, et->relation, et->dst_node_type};
    char where[160];
    snprintf(where, sizeof where, "key '%.100s'", key);
    for (int k = 0; k < 3; k++) {
        if (check_type_name(doc, n, starts[k], lens[k], where, err) != 0) return -1;
        memcpy(parts[k], starts[k], lens[k]);
        parts[k][lens[k]] = '\0';
    }
    return 0;
}

static int parse_etype_fanout_mapping(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int layers_given,
                                      cgnn_err *err) {
    if (n->len == 0) return config_node_err(doc, n, err, "per-edge-type fanouts: no edge types in the mapping");
    for (int i = 0; i < n->len; i++) {
        const yamldoc_node *v = n->items[i];
        config_edge_type et;
        if (split_etype_key(doc, v, n->keys[i], &et, err) != 0) return -1;
        char pre[3 * CONFIG_TYPE_NAME_MAX + 32], where[64];
        etype_prefix(&et, pre, sizeof pre);
        snprintf(where, sizeof where, "%d (line %d)", i, n->key_lines[i]);
        int64_t f[CONFIG_MAX_LAYERS] = {0};
        int count = 0;
        if (arg_fanout_list(doc, v, pre, 1, f, &count, err) != 0) return -1;
        if (add_etype_fanout(doc, v, a, layers_given, &et, f, count, where, err) != 0) return -1;
    }
    return 0;
}

/* num_neighbors in any of its forms into a (after num_layers is known). */
static int arg_num_neighbors(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int layers_given,
                             cgnn_err *err) {
    for (int i = 0; i < CONFIG_MAX_LAYERS; i++) a->fanouts[i] = 0;
    a->num_etype_fanouts = 0;
    const char *s = n->kind == YAMLDOC_SCALAR ? n->scalar : "";
    while (isspace((unsigned char)*s)) s++;
    if (n->kind == YAMLDOC_MAPPING || *s == '{') {
        int rc = n->kind == YAMLDOC_MAPPING ? parse_etype_fanout_mapping(doc, n, a, layers_given, err)
                                            : parse_etype_fanout_string(doc, n, a, layers_given, err);
        a->num_fanouts = 0;
        return rc;
    }
    int count;
    if (arg_fanout_list(doc, n, "", 0, a->fanouts, &count, err) != 0) return -1;
    if (count != a->num_layers)
        return config_node_err(doc, n, err,
                               "%d fanout%s given but num_layers is %d%s: one fanout per layer, seed-side first", count,
                               count == 1 ? "" : "s", a->num_layers, layers_given ? "" : " (the default)");
    for (int i = count; i < CONFIG_MAX_LAYERS; i++) a->fanouts[i] = 0;
    a->num_fanouts = a->num_layers;
    return 0;
}

/* ---- the special trainer arguments (TARG_SPECIAL rows) ------------------------------------ */

/* gnn_model_class_path: model_kind_parse takes dotted paths too (GiGL's
 * gigl.src.common.models.pyg.homogeneous.GraphSAGE). */
int config_read_model(const targ_ctx *x, const yamldoc_node *n) {
    if (model_kind_parse(n->scalar, &x->a->model) == 0) return 0;
    char list[128], buf[80];
    size_t len = 0;
    list[0] = '\0';
    for (int m = 0; m < MODEL_KIND_COUNT; m++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", m ? ", " : "", model_kind_name((model_kind)m));
    return config_node_err(x->doc, n, x->err, "unknown model %s (%s)", config_shown(n, buf, sizeof buf), list);
}

/* feature_normalization: none or row, in any case. */
int config_read_feature_normalization(const targ_ctx *x, const yamldoc_node *n) {
    char buf[80];
    if (strcasecmp(n->scalar, "none") != 0 && strcasecmp(n->scalar, "row") != 0)
        return config_node_err(x->doc, n, x->err, "expected none or row, got %s", config_shown(n, buf, sizeof buf));
    snprintf(x->a->feature_normalization, sizeof x->a->feature_normalization, "%s",
             tolower((unsigned char)n->scalar[0]) == 'n' ? "none" : "row");
    return 0;
}

/* node_feature: the name of a node feature in the dataset's feature_data (checked against the
 * dataset when it is opened: graph_source / the trainer). */
int config_read_node_feature(const targ_ctx *x, const yamldoc_node *n) {
    char buf[80];
    if (strlen(n->scalar) >= sizeof x->a->node_feature || strpbrk(n->scalar, ":/"))
        return config_node_err(x->doc, n, x->err, "expected the name of a node feature of the dataset (feature_data[*].name), got %s",
                               config_shown(n, buf, sizeof buf));
    snprintf(x->a->node_feature, sizeof x->a->node_feature, "%s", n->scalar);
    return 0;
}

/* sampling_weight: the name of an edge feature (GraphBolt's prob_name, PyG's weight_attr). */
int config_read_sampling_weight(const targ_ctx *x, const yamldoc_node *n) {
    char buf[80];
    if (!n->scalar[0] || strlen(n->scalar) >= sizeof x->a->sampling_weight || strpbrk(n->scalar, ":/"))
        return config_node_err(x->doc, n, x->err,
                               "expected the name of an edge feature of the dataset (feature_data[*].name with "
                               "domain: edge), got %s",
                               config_shown(n, buf, sizeof buf));
    snprintf(x->a->sampling_weight, sizeof x->a->sampling_weight, "%s", n->scalar);
    return 0;
}

/* num_neighbors, after num_layers: their lengths must agree. */
int config_read_num_neighbors(const targ_ctx *x, const yamldoc_node *n) {
    if (x->a->num_layers == 0)
        return config_node_err(x->doc, n, x->err, "num_layers is 0 (the learnable embeddings alone): there is no hop "
                               "to sample; remove num_neighbors");
    return arg_num_neighbors(x->doc, n, x->a, x->g[TARG_NUM_LAYERS] != NULL, x->err);
}

/* "recall_at_K" / "ndcg_at_K" (any case; K a decimal integer 1 .. 1 << 20): the full-ranking
 * early-stopping criteria. Writes the normalised name ("recall_at_20") into out, K and whether it
 * is NDCG. Returns 0, or -1 when s is not one of them. */
static int full_ranking_criterion(const char *s, char *out, size_t cap, int64_t *k, int *ndcg) {
    int is_ndcg;
    const char *p;
    if (!strncasecmp(s, "recall_at_", 10))
        is_ndcg = 0, p = s + 10;
    else if (!strncasecmp(s, "ndcg_at_", 8))
        is_ndcg = 1, p = s + 8;
    else
        return -1;
    int64_t v = 0;
    int digits = 0;
    for (; *p; p++, digits++) {
        if (*p < '0' || *p > '9' || digits >= 8) return -1;
        v = v * 10 + (*p - '0');
    }
    if (digits == 0 || v < 1 || v > (1 << 20)) return -1;
    snprintf(out, cap, "%s_at_%lld", is_ndcg ? "ndcg" : "recall", (long long)v);
    *k = v, *ndcg = is_ndcg;
    return 0;
}

/* early_stop_criterion: loss, or a metric of the task (normalised: "acc", "recall_at_20"). */
int config_read_early_stop_criterion(const targ_ctx *x, const yamldoc_node *n) {
    trainer_args *a = x->a;
    const task_kind task = x->task;
    const char *s = n->scalar, *norm = NULL;
    char rank_norm[32], buf[80];
    if (!strcasecmp(s, "loss"))
        norm = "loss";
    else if (task == TASK_NODE_CLASSIFICATION && (!strcasecmp(s, "acc") || !strcasecmp(s, "accuracy")))
        norm = "acc";
    else if (task == TASK_NODE_CLASSIFICATION && !strcasecmp(s, "micro_f1"))
        norm = "micro_f1";
    else if (task == TASK_NODE_CLASSIFICATION && !strcasecmp(s, "macro_f1"))
        norm = "macro_f1";
    else if (task == TASK_LINK_PREDICTION && !strcasecmp(s, "mrr"))
        norm = "mrr";
    else if (task == TASK_LINK_PREDICTION && !strcasecmp(s, "auc"))
        norm = "auc";
    else if (task == TASK_LINK_PREDICTION && !strcasecmp(s, "ap"))
        norm = "ap";
    else if (task == TASK_LINK_PREDICTION &&
             full_ranking_criterion(s, rank_norm, sizeof rank_norm, &a->val_rank_k, &a->val_rank_ndcg) == 0)
        norm = rank_norm;
    if (!norm)
        return config_node_err(x->doc, n, x->err, "unknown early-stopping criterion %s for %s (%s)",
                               config_shown(n, buf, sizeof buf), config_task_name(task),
                               task == TASK_NODE_CLASSIFICATION
                                   ? "loss, acc, accuracy, micro_f1 or macro_f1"
                                   : "loss, mrr, auc, ap, recall_at_K or ndcg_at_K (K >= 1)");
    snprintf(a->early_stop_criterion, sizeof a->early_stop_criterion, "%s", norm);
    return 0;
}

/* optim_class_path: torch's defaults for that optimiser (the numbers after it override them). */
int config_read_optim_class_path(const targ_ctx *x, const yamldoc_node *n) {
    optim_kind kind;
    char buf[80];
    if (optim_kind_parse(n->scalar, &kind) != 0)
        return config_node_err(x->doc, n, x->err,
                               "unknown optimiser %s (Adam, AdamW or SGD; the torch.optim. prefix is optional)",
                               config_shown(n, buf, sizeof buf));
    optim_default_config(&x->a->optim, kind, x->a->optim.lr);
    return 0;
}

/* lr_scheduler_name: torch's defaults for that scheduler (its arguments after it override them). */
int config_read_sched_name(const targ_ctx *x, const yamldoc_node *n) {
    sched_kind kind;
    char buf[80];
    if (sched_kind_parse(n->scalar, &kind) != 0)
        return config_node_err(x->doc, n, x->err,
                               "unknown learning-rate scheduler %s (ConstantLR, StepLR, LinearLR or "
                               "CosineAnnealingLR; the torch.optim.lr_scheduler. prefix is optional)",
                               config_shown(n, buf, sizeof buf));
    sched_default_config(&x->a->sched, kind);
    return 0;
}

/* lp_candidate_range "LO:HI". */
int config_read_lp_candidate_range(const targ_ctx *x, const yamldoc_node *n) {
    char buf[80];
    if (n->kind != YAMLDOC_SCALAR ||
        lp_candidate_range_parse(n->scalar, &x->a->lp_candidate_lo, &x->a->lp_candidate_hi) != 0)
        return config_node_err(x->doc, n, x->err, "expected \"LO:HI\", a node id range with 0 <= LO < HI (e.g. "
                               "\"31668:69716\"), got %s", config_shown(n, buf, sizeof buf));
    return 0;
}

/* embedding_optim_class_path: a sparse-update optimiser, any dotted prefix. */
int config_read_embedding_optim(const targ_ctx *x, const yamldoc_node *n) {
    const char *v = n->scalar, *dot = strrchr(v, '.');
    const char *base = dot ? dot + 1 : v;
    char buf[80];
    if (strcmp(base, "SparseAdam") != 0 && strcmp(base, "Adagrad") != 0 && strcmp(base, "SGD") != 0)
        return config_node_err(x->doc, n, x->err, "unsupported embedding optimiser %s (SparseAdam, Adagrad or SGD: "
                               "the sparse-update optimisers)", config_shown(n, buf, sizeof buf));
    snprintf(x->a->embedding_optim, sizeof x->a->embedding_optim, "%s", base);
    return 0;
}

/* seed_partition_uri: a path or file:// URI. */
int config_read_seed_partition(const targ_ctx *x, const yamldoc_node *n) {
    if (config_resolve_uri(x->a->seed_partition, sizeof x->a->seed_partition, n->scalar, "seed_partition_uri",
                           x->err) != 0)
        return config_node_err(x->doc, n, x->err, "%s", x->err->msg);
    return 0;
}

/* ---- task_path ------------------------------------------------------------------ */

/* Each task's constructor arguments (GiGL's names) besides weight. */
static const char *const TASK_ARG_KEYS[LP_TASK_COUNT][5] = {
    [LP_TASK_RETRIEVAL] = {"weight", "temperature", "remove_accidental_hits", NULL},
    [LP_TASK_SOFTMAX] = {"weight", "softmax_temperature", NULL},
    [LP_TASK_MARGIN] = {"weight", "margin", NULL},
    [LP_TASK_DIRECTAU] = {"weight", "gamma", "alpha", "temperature", NULL},
    [LP_TASK_BPR] = {"weight", "num_negatives", NULL},
};

/* The tasks of a task_path mapping (doc's node map): key = a task name or GiGL class path,
 * value = its weight, null (weight 1) or a mapping of weight and the task's arguments. */
static int task_map(const yamldoc *doc, const yamldoc_node *map, trainer_args *a, int temp_given, int rah_given,
                    cgnn_err *err) {
    char buf[80];
    if (map->len == 0)
        return config_node_err(doc, map, err, "no task: name one (Retrieval, Softmax, Margin, DirectAU, BPR)");
    if (map->len > LP_TASK_COUNT)
        return config_node_err(doc, map, err, "%d tasks; there are %d kinds, each at most once", map->len,
                               LP_TASK_COUNT);
    a->num_lp_tasks = 0;
    for (int i = 0; i < map->len; i++) {
        const yamldoc_node *v = map->items[i];
        lp_task_kind kind;
        if (lp_task_parse(map->keys[i], &kind) != 0)
            return config_node_err(doc, v, err,
                                   "unsupported task '%.60s' (Retrieval, Softmax, Margin, DirectAU or BPR; "
                                   "GiGL's gigl.src.common.models.layers.task.<name> also works)",
                                   map->keys[i]);
        for (int t = 0; t < a->num_lp_tasks; t++)
            if (a->lp_tasks[t].kind == kind)
                return config_node_err(doc, v, err, "task %s is listed twice", lp_task_name(kind));
        lp_task *t = &a->lp_tasks[a->num_lp_tasks++];
        lp_task_defaults(t, kind);
        if (kind == LP_TASK_RETRIEVAL) {
            t->temperature = a->softmax_temp;
            t->remove_accidental_hits = a->should_remove_accidental_hits;
        }
        if (config_is_null(v)) continue; /* weight 1 */
        if (v->kind == YAMLDOC_SCALAR) {
            if (config_arg_double(doc, v, 0, 1, INFINITY, 0, &t->weight, err) != 0) return -1;
            continue;
        }
        if (v->kind != YAMLDOC_MAPPING)
            return config_node_err(doc, v, err, "expected the task's weight or a mapping of its arguments, got %s",
                                   config_shown(v, buf, sizeof buf));
        if (yamldoc_check_keys(doc, v, TASK_ARG_KEYS[kind], err) != 0) return -1;
        for (int k = 0; k < v->len; k++) {
            const char *key = v->keys[k];
            const yamldoc_node *x = v->items[k];
            if (x->kind != YAMLDOC_SCALAR || config_is_null(x)) return config_node_err(doc, x, err, "expected a value");
            int64_t iv;
            int rc = 0;
            if (!strcmp(key, "weight")) rc = config_arg_double(doc, x, 0, 1, INFINITY, 0, &t->weight, err);
            else if (!strcmp(key, "temperature") && kind == LP_TASK_RETRIEVAL) {
                if (temp_given)
                    return config_node_err(doc, x, err,
                                           "Retrieval's temperature is also given as softmax_temp; give one");
                rc = config_arg_double(doc, x, 0, 1, INFINITY, 0, &t->temperature, err);
            } else if (!strcmp(key, "remove_accidental_hits")) {
                if (rah_given)
                    return config_node_err(doc, x, err, "also given as should_remove_accidental_hits; give one");
                rc = config_arg_bool(doc, x, &t->remove_accidental_hits, err);
            } else if (!strcmp(key, "softmax_temperature"))
                rc = config_arg_double(doc, x, 0, 1, INFINITY, 0, &t->softmax_temperature, err);
            else if (!strcmp(key, "margin"))
                rc = config_arg_double(doc, x, -INFINITY, 0, INFINITY, 0, &t->margin, err);
            else if (!strcmp(key, "gamma"))
                rc = config_arg_double(doc, x, 0, 0, INFINITY, 0, &t->gamma, err);
            else if (!strcmp(key, "alpha"))
                rc = config_arg_double(doc, x, 0, 1, INFINITY, 0, &t->alpha, err);
            else if (!strcmp(key, "temperature"))
                rc = config_arg_double(doc, x, 0, 1, INFINITY, 0, &t->temperature, err);
            else if (!strcmp(key, "num_negatives")) {
                rc = config_arg_int(doc, x, 1, INT32_MAX, &iv, err);
                t->num_negatives = iv;
            }
            if (rc != 0) return -1;
        }
    }
    return 0;
}

/* task_path (docs/CONFIG.md, "Link prediction"): one task name (weight 1, as GiGL), or several
 * tasks with weights and arguments as a YAML mapping, or the same mapping written as a string
 * in YAML flow form ("{Retrieval: 1.0, BPR: {weight: 0.5, num_negatives: 4}}"). The Retrieval
 * task takes softmax_temp and should_remove_accidental_hits (given: *_given). */
static int arg_task_path(const yamldoc *doc, const yamldoc_node *n, trainer_args *a, int temp_given, int rah_given,
                         cgnn_err *err) {
    if (n->kind == YAMLDOC_MAPPING) return task_map(doc, n, a, temp_given, rah_given, err);
    const char *s = n->scalar;
    while (isspace((unsigned char)*s)) s++;
    if (*s != '{') { /* one task */
        char buf[80];
        lp_task_kind kind;
        if (lp_task_parse(s, &kind) != 0)
            return config_node_err(
                doc, n, err,
                "unsupported task %s (Retrieval, Softmax, Margin, DirectAU or BPR; GiGL's "
                "gigl.src.common.models.layers.task.<name> also works; several tasks: a mapping of task "
                "to weight)",
                config_shown(n, buf, sizeof buf));
        a->num_lp_tasks = 1;
        lp_task_defaults(&a->lp_tasks[0], kind);
        a->lp_tasks[0].temperature = kind == LP_TASK_RETRIEVAL ? a->softmax_temp : a->lp_tasks[0].temperature;
        a->lp_tasks[0].remove_accidental_hits = a->should_remove_accidental_hits;
        return 0;
    }
    /* the string form: parsed as YAML; its messages name the trainer argument, then the entry */
    yamldoc sub;
    char where[CONFIG_PATH_MAX + 1024]; /* yamldoc keeps what fits of it */
    snprintf(where, sizeof where, "%s: %s (line %d)", doc->file, n->path, n->line);
    if (yamldoc_parse(&sub, s, strlen(s), where, err) != 0) return -1;
    int rc = 0;
    if (!sub.root || sub.root->kind != YAMLDOC_MAPPING)
        rc = config_node_err(doc, n, err, "expected a task name or a mapping of tasks to weights");
    else
        rc = task_map(&sub, sub.root, a, temp_given, rah_given, err);
    yamldoc_free(&sub);
    return rc;
}

/* task_path: given with softmax_temp or should_remove_accidental_hits, the Retrieval task takes them. */
int config_read_task_path(const targ_ctx *x, const yamldoc_node *n) {
    return arg_task_path(x->doc, n, x->a, x->g[TARG_SOFTMAX_TEMP] != NULL, x->g[TARG_REMOVE_ACCIDENTAL_HITS] != NULL,
                         x->err);
}

/* ---- lightgcn_alpha ---------------------------------------------------------------------- */

/* lightgcn_alpha (LightGCN only; config_check_lightgcn): "a", "a0, a1, ..." or a YAML list: one
 * value for every layer, or num_layers + 1 (x^(0) .. x^(L)). */
int config_read_lightgcn_alpha(const targ_ctx *x, const yamldoc_node *n) {
    const yamldoc *doc = x->doc;
    trainer_args *a = x->a;
    cgnn_err *err = x->err;
    char buf[80];
    int cnt = 0;
    if (n->kind == YAMLDOC_SEQUENCE) {
        for (int i = 0; i < n->len; i++) {
            const yamldoc_node *it = n->items[i];
            if (it->kind != YAMLDOC_SCALAR) return config_node_err(doc, it, err, "expected a number");
            if (cnt > CONFIG_MAX_LAYERS) return config_node_err(doc, n, err, "more than num_layers + 1 values");
            if (config_arg_double(doc, it, -FLT_MAX, 0, FLT_MAX, 0, &a->lightgcn_alpha[cnt++], err) != 0) return -1;
        }
    } else { /* "a" or "a0, a1, ..." */
        const char *p = n->scalar;
        while (*p) {
            char *end = NULL;
            errno = 0;
            const double v = strtod(p, &end);
            if (end == p || errno || !isfinite(v) || fabs(v) > FLT_MAX)
                return config_node_err(doc, n, err, "expected a number or a comma-separated list of numbers, got %s",
                                       config_shown(n, buf, sizeof buf));
            if (cnt > CONFIG_MAX_LAYERS) return config_node_err(doc, n, err, "more than num_layers + 1 values");
            a->lightgcn_alpha[cnt++] = v;
            p = end;
            while (isspace((unsigned char)*p)) p++;
            if (*p == ',') p++;
            else if (*p)
                return config_node_err(doc, n, err, "expected a number or a comma-separated list of numbers, got %s",
                                       config_shown(n, buf, sizeof buf));
            while (isspace((unsigned char)*p)) p++;
        }
    }
    if (cnt == 0 || (cnt != 1 && cnt != a->num_layers + 1))
        return config_node_err(doc, n, err, "%d values: give one alpha for every layer, or num_layers + 1 = %d "
                               "(x^(0) .. x^(%d))", cnt, a->num_layers + 1, a->num_layers);
    a->num_lightgcn_alpha = cnt;
    return 0;
}
