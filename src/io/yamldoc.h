/* yamldoc.h — a small read-only YAML document tree built with libyaml.
 *
 * Every node remembers its line and its path from the root ("tasks[0].train_set[0].data[1]"),
 * so that errors about configs and dataset metadata name the file, the field and the line.
 * Anchors/aliases are resolved; tags are ignored. The tree is owned by the yamldoc and freed
 * with yamldoc_free; nodes are borrowed pointers into it.
 */
#ifndef CGNN_YAMLDOC_H
#define CGNN_YAMLDOC_H

#include <stdint.h>

#include "util/err.h"

typedef enum yaml_kind { YAMLDOC_SCALAR, YAMLDOC_SEQUENCE, YAMLDOC_MAPPING, YAMLDOC_KIND_COUNT } yaml_kind;

typedef struct yamldoc_node yamldoc_node;
struct yamldoc_node {
    yaml_kind kind;
    int line;          /* 1-based line in the file */
    char *path;        /* "tasks[0].name"; "" for the root */
    char *scalar;      /* SCALAR: the text */
    int quoted;        /* SCALAR: was written in quotes (so "1" is a string, not a number) */
    int len;           /* SEQUENCE: items; MAPPING: key/value pairs */
    char **keys;       /* MAPPING: keys[len] */
    int *key_lines;    /* MAPPING: key_lines[len], 1-based line of each key */
    yamldoc_node **items; /* SEQUENCE: items[len]; MAPPING: values[len] */
};

typedef struct yamldoc {
    char file[4096];   /* the path it was read from, for messages */
    yamldoc_node *root; /* NULL for an empty document */
} yamldoc;

/* Parses the YAML file at path. Returns 0, or -1 with *err ("path:LINE:COL: what libyaml
 * says" for malformed YAML; "path: cannot open" for a missing file). Caller owns *doc. */
int yamldoc_load(yamldoc *doc, const char *path, cgnn_err *err);
/* Parses YAML text (file is the name used in messages). */
int yamldoc_parse(yamldoc *doc, const char *text, size_t len, const char *file, cgnn_err *err);
/* Frees the tree; NULL-safe. */
void yamldoc_free(yamldoc *doc);

/* MAPPING lookup; NULL if node is not a mapping or has no such key. */
const yamldoc_node *yamldoc_get(const yamldoc_node *map, const char *key);

/* Typed accessors. Each returns 0, or -1 with *err "FILE: PATH (line N): expected ...".
 * `doc` is used only for the file name in messages. */
int yamldoc_expect_kind(const yamldoc *doc, const yamldoc_node *node, yaml_kind kind, cgnn_err *err);
int yamldoc_get_string(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                       const char **out, cgnn_err *err);
int yamldoc_get_int(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                    int64_t *out, cgnn_err *err);
int yamldoc_get_bool(const yamldoc *doc, const yamldoc_node *map, const char *key, int required,
                     int *out, cgnn_err *err);
/* Checks that every key of map is in the NULL-terminated list `allowed`; on an unknown key
 * the error names it and suggests the closest allowed key (edit distance). */
int yamldoc_check_keys(const yamldoc *doc, const yamldoc_node *map, const char *const *allowed,
                       cgnn_err *err);

/* Strict scalar parsing helpers shared with the config reader (whole string must parse). */
int yamldoc_parse_int(const char *s, int64_t *out);
int yamldoc_parse_double(const char *s, double *out);
int yamldoc_parse_bool(const char *s, int *out); /* true/false in any case */

/* Levenshtein distance, for "did you mean" suggestions. */
int yamldoc_edit_distance(const char *a, const char *b);

#endif
