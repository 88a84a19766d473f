/* yamldoc.c — a read-only YAML tree built from libyaml's event parser; see yamldoc.h.
 *
 * The tree is built without recursion from the event stream: a stack holds the sequences and
 * mappings that are still open, and every new node is attached to its parent as soon as it
 * starts, so on any error freeing the root frees everything built so far.
 * Aliases are expanded by deep copy (each copy gets the path of the place the alias appears),
 * bounded by a node budget, a byte budget (every node, path, key and scalar copy is charged,
 * so a few KB of aliases to long scalars cannot expand to gigabytes) and a depth limit, so
 * that hostile inputs ("billion laughs", deep nesting) fail with a message instead of
 * exhausting memory or the stack.
 */
#include "io/yamldoc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "io/file.h"

#define YAMLDOC_MAX_DEPTH 256        /* nesting levels of sequences/mappings */
#define YAMLDOC_MAX_NODES (1L << 20) /* nodes in one document, alias copies included */
#define YAMLDOC_MAX_BYTES (64L << 20) /* bytes of nodes, paths, keys and scalars, copies included */
#define YAMLDOC_MAX_FILE_BYTES (16L << 20) /* a config or metadata.yaml larger than this is not one */

/* ---- small helpers ---------------------------------------------------------- */

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = cgnn_malloc(n);
    memcpy(p, s, n);
    return p;
}

/* "parent.key", or "key" under the root. */
static char *path_key(const char *parent, const char *key) {
    if (!*parent) return xstrdup(key);
    size_t n = strlen(parent) + 1 + strlen(key) + 1;
    char *p = cgnn_malloc(n);
    snprintf(p, n, "%s.%s", parent, key);
    return p;
}

/* "parent[i]". */
static char *path_index(const char *parent, int i) {
    size_t n = strlen(parent) + 24;
    char *p = cgnn_malloc(n);
    snprintf(p, n, "%s[%d]", parent, i);
    return p;
}

static void node_free(yamldoc_node *n) {
    if (!n) return;
    for (int i = 0; i < n->len; i++) {
        node_free(n->items[i]);
        if (n->keys) free(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n->key_lines);
    free(n->path);
    free(n->scalar);
    free(n);
}

/* Appends child (and, for a mapping, its key, taken over) to parent; *cap is the capacity. */
static void node_append(yamldoc_node *parent, int *cap, char *key, int key_line, yamldoc_node *child) {
    if (parent->len == *cap) {
        int ncap = *cap ? 2 * *cap : 4;
        parent->items = cgnn_realloc(parent->items, (size_t)ncap * sizeof *parent->items);
        if (parent->kind == YAMLDOC_MAPPING) {
            parent->keys = cgnn_realloc(parent->keys, (size_t)ncap * sizeof *parent->keys);
            parent->key_lines = cgnn_realloc(parent->key_lines, (size_t)ncap * sizeof *parent->key_lines);
        }
        *cap = ncap;
    }
    if (parent->kind == YAMLDOC_MAPPING) {
        parent->keys[parent->len] = key;
        parent->key_lines[parent->len] = key_line;
    }
    parent->items[parent->len++] = child;
}

/* ---- the builder ---------------------------------------------------------- */

typedef struct yb_frame {
    yamldoc_node *node; /* the open SEQUENCE or MAPPING */
    int cap;            /* capacity of node->items (and keys) */
    char *key;          /* MAPPING: key read, value not yet; owned */
    int key_line;
    int anchor;         /* index into anchors, or -1 */
} yb_frame;

typedef struct yb_anchor {
    char *name;
    yamldoc_node *node;
    int complete; /* 0 while the anchored collection is still open (alias to it = recursion) */
} yb_anchor;

typedef struct yamldoc_builder {
    const char *file;
    yamldoc_node *root;
    yb_frame stack[YAMLDOC_MAX_DEPTH];
    int depth;
    yb_anchor *anchors;
    int num_anchors, cap_anchors;
    long num_nodes;
    size_t num_bytes; /* charged against YAMLDOC_MAX_BYTES */
} yamldoc_builder;

static int builder_error(const yamldoc_builder *b, const yaml_mark_t *mark, cgnn_err *err,
                         const char *what, const char *arg) {
    return err_set(err, CGNN_ERR_INPUT, "%s:%zu:%zu: %s%s%s%s", b->file, mark->line + 1,
                   mark->column + 1, what, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
}

/* Charges `bytes` of tree memory against the byte budget; -1 when it is spent. */
static int builder_charge(yamldoc_builder *b, size_t bytes) {
    b->num_bytes += bytes;
    return b->num_bytes > (size_t)YAMLDOC_MAX_BYTES ? -1 : 0;
}

/* A new node holding a scalar of scalar_len bytes (0 for collections), counted against the
 * node and byte budgets; takes over path. NULL when a budget is spent. */
static yamldoc_node *builder_node(yamldoc_builder *b, yaml_kind kind, int line, char *path, size_t scalar_len) {
    if (++b->num_nodes > YAMLDOC_MAX_NODES ||
        builder_charge(b, sizeof(yamldoc_node) + strlen(path) + 1 + scalar_len + 1) != 0) {
        free(path);
        return NULL;
    }
    yamldoc_node *n = cgnn_calloc(1, sizeof *n);
    n->kind = kind;
    n->line = line;
    n->path = path;
    return n;
}

/* The path the next value gets at the current position. */
static char *builder_value_path(const yamldoc_builder *b) {
    if (b->depth == 0) return xstrdup("");
    const yb_frame *f = &b->stack[b->depth - 1];
    if (f->node->kind == YAMLDOC_SEQUENCE) return path_index(f->node->path, f->node->len);
    return path_key(f->node->path, f->key);
}

/* Attaches a finished-or-started value at the current position. */
static void builder_attach(yamldoc_builder *b, yamldoc_node *n) {
    if (b->depth == 0) {
        CGNN_CHECK(b->root == NULL);
        b->root = n;
        return;
    }
    yb_frame *f = &b->stack[b->depth - 1];
    node_append(f->node, &f->cap, f->key, f->key_line, n);
    f->key = NULL;
}

/* Registers an anchor name for node; returns its index. */
static int builder_anchor(yamldoc_builder *b, const char *name, yamldoc_node *n, int complete) {
    if (b->num_anchors == b->cap_anchors) {
        b->cap_anchors = b->cap_anchors ? 2 * b->cap_anchors : 8;
        b->anchors = cgnn_realloc(b->anchors, (size_t)b->cap_anchors * sizeof *b->anchors);
    }
    b->anchors[b->num_anchors] = (yb_anchor){xstrdup(name), n, complete};
    return b->num_anchors++;
}

static const yb_anchor *builder_find_anchor(const yamldoc_builder *b, const char *name) {
    for (int i = b->num_anchors - 1; i >= 0; i--) /* a redefined anchor: the latest wins */
        if (strcmp(b->anchors[i].name, name) == 0) return &b->anchors[i];
    return NULL;
}

/* Deep copy of src with the given path (taken over) at nesting depth; NULL if a limit is hit. */
static yamldoc_node *builder_copy(yamldoc_builder *b, const yamldoc_node *src, char *path, int depth) {
    if (depth > YAMLDOC_MAX_DEPTH) {
        free(path);
        return NULL;
    }
    yamldoc_node *n = builder_node(b, src->kind, src->line, path, src->scalar ? strlen(src->scalar) : 0);
    if (!n) return NULL;
    n->quoted = src->quoted;
    if (src->scalar) n->scalar = xstrdup(src->scalar);
    int cap = 0;
    for (int i = 0; i < src->len; i++) {
        char *cpath = src->kind == YAMLDOC_MAPPING ? path_key(n->path, src->keys[i])
                                                   : path_index(n->path, i);
        yamldoc_node *c = builder_copy(b, src->items[i], cpath, depth + 1);
        if (!c || (src->kind == YAMLDOC_MAPPING && builder_charge(b, strlen(src->keys[i]) + 1) != 0)) {
            node_free(c);
            node_free(n);
            return NULL;
        }
        node_append(n, &cap, src->kind == YAMLDOC_MAPPING ? xstrdup(src->keys[i]) : NULL,
                    src->kind == YAMLDOC_MAPPING ? src->key_lines[i] : 0, c);
    }
    return n;
}

static void builder_free(yamldoc_builder *b) {
    for (int i = 0; i < b->depth; i++) free(b->stack[i].key);
    for (int i = 0; i < b->num_anchors; i++) free(b->anchors[i].name);
    free(b->anchors);
    node_free(b->root);
    b->root = NULL;
}

/* 1 when the open mapping on top of the stack waits for a key (the next node is a key). */
static int builder_wants_key(const yamldoc_builder *b) {
    if (b->depth == 0) return 0;
    const yb_frame *f = &b->stack[b->depth - 1];
    return f->node->kind == YAMLDOC_MAPPING && f->key == NULL;
}

/* Takes over key as the pending key of the open mapping; rejects duplicates. */
static int builder_set_key(yamldoc_builder *b, char *key, const yaml_mark_t *mark, cgnn_err *err) {
    yb_frame *f = &b->stack[b->depth - 1];
    for (int i = 0; i < f->node->len; i++) {
        if (strcmp(f->node->keys[i], key) == 0) {
            builder_error(b, mark, err, "duplicate key", key);
            free(key);
            return -1;
        }
    }
    f->key = key;
    f->key_line = (int)mark->line + 1;
    return 0;
}

/* Handles one parser event. Returns 1 at the end of the stream, 0 to go on, -1 on error. */
static int builder_event(yamldoc_builder *b, const yaml_event_t *ev, int *num_docs, cgnn_err *err) {
    const yaml_mark_t *mark = &ev->start_mark;
    int line = (int)mark->line + 1;
    switch (ev->type) {
    case YAML_STREAM_END_EVENT: return 1;
    case YAML_DOCUMENT_START_EVENT:
        if (++*num_docs > 1)
            return builder_error(b, mark, err,
                                 "more than one YAML document in the file (only one is supported)",
                                 NULL);
        return 0;
    case YAML_SCALAR_EVENT: {
        const char *text = (const char *)ev->data.scalar.value;
        if (strlen(text) != ev->data.scalar.length)
            return builder_error(b, mark, err, "NUL character in a scalar", NULL);
        if (builder_wants_key(b)) return builder_set_key(b, xstrdup(text), mark, err);
        yamldoc_node *n = builder_node(b, YAMLDOC_SCALAR, line, builder_value_path(b), strlen(text));
        if (!n) return builder_error(b, mark, err, "document too large (alias expansion?)", NULL);
        n->scalar = xstrdup(text);
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        builder_attach(b, n);
        if (ev->data.scalar.anchor) builder_anchor(b, (const char *)ev->data.scalar.anchor, n, 1);
        return 0;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int is_seq = ev->type == YAML_SEQUENCE_START_EVENT;
        if (builder_wants_key(b))
            return builder_error(b, mark, err, "complex mapping keys are not supported", NULL);
        if (b->depth >= YAMLDOC_MAX_DEPTH)
            return builder_error(b, mark, err, "nesting too deep", NULL);
        yamldoc_node *n = builder_node(b, is_seq ? YAMLDOC_SEQUENCE : YAMLDOC_MAPPING, line,
                                       builder_value_path(b), 0);
        if (!n) return builder_error(b, mark, err, "document too large (alias expansion?)", NULL);
        builder_attach(b, n);
        const yaml_char_t *anchor = is_seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor;
        yb_frame *f = &b->stack[b->depth++];
        *f = (yb_frame){n, 0, NULL, 0, anchor ? builder_anchor(b, (const char *)anchor, n, 0) : -1};
        return 0;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        CGNN_CHECK(b->depth > 0);
        yb_frame *f = &b->stack[--b->depth];
        if (f->anchor >= 0) b->anchors[f->anchor].complete = 1;
        free(f->key); /* libyaml always pairs keys with values; defensive */
        f->key = NULL;
        return 0;
    }
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        const yb_anchor *a = builder_find_anchor(b, name);
        if (!a) return builder_error(b, mark, err, "found undefined alias", name);
        if (!a->complete) return builder_error(b, mark, err, "recursive alias", name);
        if (builder_wants_key(b)) {
            if (a->node->kind != YAMLDOC_SCALAR)
                return builder_error(b, mark, err, "complex mapping keys are not supported", NULL);
            if (builder_charge(b, strlen(a->node->scalar) + 1) != 0)
                return builder_error(b, mark, err, "alias expands to too many bytes", name);
            return builder_set_key(b, xstrdup(a->node->scalar), mark, err);
        }
        yamldoc_node *n = builder_copy(b, a->node, builder_value_path(b), b->depth);
        if (!n)
            return builder_error(b, mark, err, "alias expands to too many nodes or bytes, or too deep", name);
        builder_attach(b, n);
        return 0;
    }
    default: return 0; /* STREAM_START, DOCUMENT_END, NO_EVENT */
    }
}

/* Formats libyaml's error as "file:LINE:COL: problem (context)". */
static int parser_error(const yaml_parser_t *p, const char *file, const char *text, size_t len,
                        cgnn_err *err) {
    if (p->error == YAML_MEMORY_ERROR)
        return err_set(err, CGNN_ERR_RUNTIME, "%s: out of memory while parsing YAML", file);
    size_t line, col;
    if (p->error == YAML_READER_ERROR) { /* only a byte offset is known: count lines */
        line = 1;
        col = 1;
        for (size_t i = 0; i < p->problem_offset && i < len; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        if (p->problem_value != -1)
            return err_set(err, CGNN_ERR_INPUT, "%s:%zu:%zu: %s (byte 0x%02X)", file, line, col,
                           p->problem ? p->problem : "invalid input", (unsigned)p->problem_value);
        return err_set(err, CGNN_ERR_INPUT, "%s:%zu:%zu: %s", file, line, col,
                       p->problem ? p->problem : "invalid input");
    }
    line = p->problem_mark.line + 1;
    col = p->problem_mark.column + 1;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->context)
        return err_set(err, CGNN_ERR_INPUT, "%s:%zu:%zu: %s (%s that starts at line %zu, column %zu)",
                       file, line, col, problem, p->context, p->context_mark.line + 1,
                       p->context_mark.column + 1);
    return err_set(err, CGNN_ERR_INPUT, "%s:%zu:%zu: %s", file, line, col, problem);
}

int yamldoc_parse(yamldoc *doc, const char *text, size_t len, const char *file, cgnn_err *err) {
    memset(doc, 0, sizeof *doc);
    snprintf(doc->file, sizeof doc->file, "%s", file);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return err_set(err, CGNN_ERR_RUNTIME, "%s: cannot initialise the YAML parser", file);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yamldoc_builder *b = cgnn_calloc(1, sizeof *b);
    b->file = doc->file;
    int num_docs = 0, rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = parser_error(&parser, doc->file, text, len, err);
            break;
        }
        int r = builder_event(b, &ev, &num_docs, err);
        yaml_event_delete(&ev);
        if (r != 0) {
            rc = r < 0 ? -1 : 0;
            break;
        }
    }
    yaml_parser_delete(&parser);
    if (rc == 0) {
        doc->root = b->root;
        b->root = NULL;
    }
    builder_free(b);
    free(b);
    return rc;
}

int yamldoc_load(yamldoc *doc, const char *path, cgnn_err *err) {
    memset(doc, 0, sizeof *doc);
    snprintf(doc->file, sizeof doc->file, "%s", path);
    struct stat st;
    int e = 0;
    int fd = file_open_regular(path, &st, err);
    if (fd < 0) return -1;
    if (st.st_size > YAMLDOC_MAX_FILE_BYTES) {
        close(fd);
        return err_set(err, CGNN_ERR_INPUT, "%s: file of %lld bytes is too large for a YAML config (limit %lld)", path,
                       (long long)st.st_size, (long long)YAMLDOC_MAX_FILE_BYTES);
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *text = cgnn_malloc(cap);
    for (;;) {
        if (len + 1 >= cap) {
            cap *= 2;
            text = cgnn_realloc(text, cap);
        }
        ssize_t got = read(fd, text + len, cap - 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            e = errno;
            close(fd);
            free(text);
            return err_set(err, CGNN_ERR_INPUT, "%s: read error: %s", path, strerror(e));
        }
        if (got == 0) break;
        len += (size_t)got;
        if (len > (size_t)YAMLDOC_MAX_FILE_BYTES) { /* grew while being read */
            close(fd);
            free(text);
            return err_set(err, CGNN_ERR_INPUT, "%s: file is too large for a YAML config (limit %lld bytes)", path,
                           (long long)YAMLDOC_MAX_FILE_BYTES);
        }
    }
    close(fd);
    text[len] = '\0';
    int rc = yamldoc_parse(doc, text, len, path, err);
    free(text);
    return rc;
}

void yamldoc_free(yamldoc *doc) {
    if (!doc) return;
    node_free(doc->root);
    doc->root = NULL;
}

/* ---- lookups and typed accessors ------------------------------------------ */

const yamldoc_node *yamldoc_get(const yamldoc_node *map, const char *key) {
    if (!map || map->kind != YAMLDOC_MAPPING) return NULL;
    for (int i = 0; i < map->len; i++)
        if (strcmp(map->keys[i], key) == 0) return map->items[i];
    return NULL;
}

static const char *node_where(const yamldoc_node *n) { return n->path[0] ? n->path : "top level"; }

static const char *kind_name(yaml_kind kind) {
    static const char *const NAMES[] = {"a scalar", "a list", "a mapping"};
    _Static_assert(sizeof NAMES / sizeof NAMES[0] == YAMLDOC_KIND_COUNT, "kind names");
    return NAMES[kind];
}

/* "'text'" (shortened) for scalars, "a list" / "a mapping" otherwise. */
static const char *node_describe(const yamldoc_node *n, char *buf, size_t cap) {
    if (n->kind != YAMLDOC_SCALAR) return kind_name(n->kind);
    if (strlen(n->scalar) > 60)
        snprintf(buf, cap, "'%.57s...'", n->scalar);
    else
        snprintf(buf, cap, "'%s'", n->scalar);
    return buf;
}

/* An unquoted empty, ~ or null scalar: YAML's null. */
static int node_is_null(const yamldoc_node *n) {
    if (n->kind != YAMLDOC_SCALAR || n->quoted) return 0;
    const char *s = n->scalar;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

int yamldoc_expect_kind(const yamldoc *doc, const yamldoc_node *node, yaml_kind kind, cgnn_err *err) {
    if (!node)
        return err_set(err, CGNN_ERR_INPUT, "%s: empty document, expected %s", doc->file,
                       kind_name(kind));
    if (node->kind == kind) return 0;
    char buf[80];
    return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): expected %s, got %s", doc->file,
                   node_where(node), node->line, kind_name(kind), node_describe(node, buf, sizeof buf));
}

/* Finds map[key] for a typed accessor: *out is the scalar value, or NULL when it is absent or
 * null and not required. `what` names the expected type for messages. */
static int lookup_scalar(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                         const char *what, const yamldoc_node **out, cgnn_err *err) {
    *out = NULL;
    if (!map) {
        if (!required) return 0;
        return err_set(err, CGNN_ERR_INPUT, "%s: missing key '%s'", doc->file, key);
    }
    if (yamldoc_expect_kind(doc, map, YAMLDOC_MAPPING, err) != 0) return -1;
    const yamldoc_node *v = yamldoc_get(map, key);
    if (!v) {
        if (!required) return 0;
        return err_set(err, CGNN_ERR_INPUT, "%s: %s: missing key '%s'", doc->file, node_where(map), key);
    }
    if (node_is_null(v)) {
        if (!required) return 0;
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): expected %s, got an empty value",
                       doc->file, v->path, v->line, what);
    }
    if (v->kind != YAMLDOC_SCALAR)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): expected %s, got %s", doc->file,
                       v->path, v->line, what, kind_name(v->kind));
    *out = v;
    return 0;
}

int yamldoc_get_string(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                       const char **out, cgnn_err *err) {
    const yamldoc_node *v;
    if (lookup_scalar(doc, map, key, required, "a string", &v, err) != 0) return -1;
    if (v) *out = v->scalar;
    return 0;
}

int yamldoc_get_int(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                    int64_t *out, cgnn_err *err) {
    const yamldoc_node *v;
    if (lookup_scalar(doc, map, key, required, "an integer", &v, err) != 0) return -1;
    if (!v) return 0;
    char buf[80];
    if (yamldoc_parse_int(v->scalar, out) != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): expected an integer, got %s",
                       doc->file, v->path, v->line, node_describe(v, buf, sizeof buf));
    return 0;
}

int yamldoc_get_bool(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                     int *out, cgnn_err *err) {
    const yamldoc_node *v;
    if (lookup_scalar(doc, map, key, required, "true or false", &v, err) != 0) return -1;
    if (!v) return 0;
    char buf[80];
    if (yamldoc_parse_bool(v->scalar, out) != 0)
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): expected true or false, got %s",
                       doc->file, v->path, v->line, node_describe(v, buf, sizeof buf));
    return 0;
}

int yamldoc_check_keys(const yamldoc *doc, const yamldoc_node *map, const char *const *allowed,
                       cgnn_err *err) {
    if (yamldoc_expect_kind(doc, map, YAMLDOC_MAPPING, err) != 0) return -1;
    for (int i = 0; i < map->len; i++) {
        const char *key = map->keys[i];
        const char *best = NULL;
        int best_d = 1 << 30, known = 0;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(*a, key) == 0) {
                known = 1;
                break;
            }
            int d = yamldoc_edit_distance(key, *a);
            if (d < best_d) {
                best_d = d;
                best = *a;
            }
        }
        if (known) continue;
        /* A suggestion only when it is plausibly a typo, not a different word. */
        int limit = (int)strlen(best ? best : "") / 3;
        if (limit < 2) limit = 2;
        if (best && best_d <= limit && best_d < (int)strlen(key))
            return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): unknown key '%s'; did you mean '%s'?",
                           doc->file, map->items[i]->path, map->key_lines[i], key, best);
        char list[512];
        size_t n = 0;
        list[0] = '\0';
        for (const char *const *a = allowed; *a && n < sizeof list; a++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", a == allowed ? "" : ", ", *a);
        return err_set(err, CGNN_ERR_INPUT, "%s: %s (line %d): unknown key '%s' (allowed: %s)",
                       doc->file, map->items[i]->path, map->key_lines[i], key, list);
    }
    return 0;
}

/* ---- strict scalar parsing ------------------------------------------------ */

int yamldoc_parse_int(const char *s, int64_t *out) {
    if (!s) return -1;
    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (!isdigit((unsigned char)*p)) return -1;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX, v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (limit - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (*p) return -1;
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return 0;
}

int yamldoc_parse_double(const char *s, double *out) {
    if (!s || !*s) return -1;
    /* YAML's spellings of infinity and NaN. */
    const char *t = (*s == '+' || *s == '-') ? s + 1 : s;
    if (!strcasecmp(t, ".inf")) {
        *out = *s == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    if (!strcasecmp(s, ".nan")) {
        *out = NAN;
        return 0;
    }
    /* strtod would also take leading spaces and hex floats: not numbers in a config. */
    if (isspace((unsigned char)*s) || strchr(s, 'x') || strchr(s, 'X')) return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end) return -1;
    if (errno == ERANGE && isinf(v)) return -1; /* overflow; underflow to 0/subnormal is fine */
    *out = v;
    return 0;
}

int yamldoc_parse_bool(const char *s, int *out) {
    if (!s) return -1;
    if (!strcasecmp(s, "true")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(s, "false")) {
        *out = 0;
        return 0;
    }
    return -1;
}

int yamldoc_edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    int *row = cgnn_malloc((lb + 1) * sizeof *row); /* row[j]: distance a[0..i) -> b[0..j) */
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    int d = row[lb];
    free(row);
    return d;
}
