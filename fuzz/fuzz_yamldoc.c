/* fuzz_yamldoc.c — libFuzzer target: the YAML document tree (yamldoc_parse) and its typed
 * accessors.
 *
 * Input: arbitrary bytes as one YAML document. A parsed tree is walked in full: every mapping
 * key goes through yamldoc_get and the string / integer / boolean accessors, every mapping
 * through yamldoc_check_keys (with config-like key names, so the "did you mean" path runs),
 * every scalar through the strict number parsers. Each failure must be an input error naming
 * the file.
 */
#include <stdlib.h>

#include "fuzz_util.h"
#include "io/yamldoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char FILE_NAME[] = "fuzz-input.yaml";

static void walk(const yamldoc *doc, const yamldoc_node *n, int depth) {
    static const char *const ALLOWED[] = {"graph", "nodes", "edges", "num", "format", "path",
                                          "trainerArgs", "num_layers", NULL};
    FUZZ_ASSERT(n && n->path && depth <= 1024);
    cgnn_err err = {0};
    int64_t i64;
    double dbl;
    int b;
    switch (n->kind) {
    case YAMLDOC_SCALAR:
        FUZZ_ASSERT(n->scalar && n->len == 0);
        (void)yamldoc_parse_int(n->scalar, &i64);
        (void)yamldoc_parse_double(n->scalar, &dbl);
        (void)yamldoc_parse_bool(n->scalar, &b);
        return;
    case YAMLDOC_SEQUENCE:
        FUZZ_ASSERT(n->len >= 0 && (n->len == 0 || n->items));
        fuzz_check(yamldoc_expect_kind(doc, n, YAMLDOC_MAPPING, &err), &err, FILE_NAME);
        break;
    case YAMLDOC_MAPPING:
        FUZZ_ASSERT(n->len >= 0 && (n->len == 0 || (n->items && n->keys && n->key_lines)));
        for (int i = 0; i < n->len; i++) {
            const char *key = n->keys[i];
            FUZZ_ASSERT(yamldoc_get(n, key) == n->items[i]); /* duplicate keys are rejected */
            const char *s = NULL;
            err = (cgnn_err){0};
            fuzz_check(yamldoc_get_string(doc, n, key, 1, &s, &err), &err, FILE_NAME);
            err = (cgnn_err){0};
            fuzz_check(yamldoc_get_int(doc, n, key, 0, &i64, &err), &err, FILE_NAME);
            err = (cgnn_err){0};
            fuzz_check(yamldoc_get_bool(doc, n, key, 1, &b, &err), &err, FILE_NAME);
        }
        err = (cgnn_err){0};
        fuzz_check(yamldoc_check_keys(doc, n, ALLOWED, &err), &err, FILE_NAME);
        break;
    default: FUZZ_ASSERT(0);
    }
    for (int i = 0; i < n->len; i++) walk(doc, n->items[i], depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    yamldoc doc;
    cgnn_err err = {0};
    int rc = yamldoc_parse(&doc, (const char *)data, size, FILE_NAME, &err);
    fuzz_check(rc, &err, FILE_NAME);
    if (rc == 0 && doc.root) walk(&doc, doc.root, 0);
    yamldoc_free(&doc);
    return 0;
}
