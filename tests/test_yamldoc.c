/* test_yamldoc.c — the YAML tree: structure, paths, line numbers, error messages, aliases,
 * strict scalar parsing and "did you mean" suggestions. */
#include <unistd.h>

#include "io/yamldoc.h"
#include "test.h"

static const char DOC[] =
    "dataset_name: cora\n"               /* 1 */
    "tasks:\n"                           /* 2 */
    "  - name: nc\n"                     /* 3 */
    "    num_classes: 7\n"               /* 4 */
    "    ratio: 0.5\n"                   /* 5 */
    "    train_set:\n"                   /* 6 */
    "      - data:\n"                    /* 7 */
    "          - name: seeds\n"          /* 8 */
    "            path: a.npy\n"          /* 9 */
    "          - name: labels\n"         /* 10 */
    "            path: b.npy\n"          /* 11 */
    "            in_memory: FALSE\n"     /* 12 */
    "flow: {x: 1, y: [2, \"3\"]}\n"      /* 13 */
    "bad_int: abc\n"                     /* 14 */
    "bad_bool: yes\n"                    /* 15 */
    "nested: {inner: [1, 2]}\n"          /* 16 */
    "empty:\n";                          /* 17 */

static int parse(yamldoc *d, const char *text, cgnn_err *err) {
    return yamldoc_parse(d, text, strlen(text), "cfg.yaml", err);
}

TEST(structure_paths_lines) {
    yamldoc d;
    cgnn_err err = {0};
    ASSERT_EQ(parse(&d, DOC, &err), 0);
    const yamldoc_node *root = d.root;
    ASSERT(root != NULL);
    ASSERT_EQ(root->kind, YAMLDOC_MAPPING);
    ASSERT_EQ(strcmp(root->path, ""), 0);
    ASSERT_EQ(root->len, 7);
    ASSERT_EQ(strcmp(root->keys[0], "dataset_name"), 0);
    ASSERT_EQ(root->key_lines[1], 2);

    const yamldoc_node *tasks = yamldoc_get(root, "tasks");
    ASSERT(tasks && tasks->kind == YAMLDOC_SEQUENCE && tasks->len == 1);
    ASSERT_EQ(strcmp(tasks->path, "tasks"), 0);
    const yamldoc_node *t0 = tasks->items[0];
    ASSERT_EQ(strcmp(t0->path, "tasks[0]"), 0);
    ASSERT_EQ(t0->line, 3);
    const yamldoc_node *train = yamldoc_get(t0, "train_set");
    const yamldoc_node *data = yamldoc_get(train->items[0], "data");
    const yamldoc_node *p1 = yamldoc_get(data->items[1], "path");
    ASSERT(p1 && p1->kind == YAMLDOC_SCALAR);
    ASSERT_EQ(strcmp(p1->path, "tasks[0].train_set[0].data[1].path"), 0);
    ASSERT_EQ(strcmp(p1->scalar, "b.npy"), 0);
    ASSERT_EQ(p1->line, 11);
    ASSERT_EQ(p1->quoted, 0);

    const yamldoc_node *y = yamldoc_get(yamldoc_get(root, "flow"), "y");
    ASSERT(y && y->kind == YAMLDOC_SEQUENCE && y->len == 2);
    ASSERT_EQ(strcmp(y->items[1]->path, "flow.y[1]"), 0);
    ASSERT_EQ(y->items[1]->quoted, 1);
    ASSERT_EQ(y->items[0]->quoted, 0);
    ASSERT_EQ(y->line, 13);

    ASSERT(yamldoc_get(root, "nope") == NULL);
    ASSERT(yamldoc_get(tasks, "name") == NULL); /* not a mapping */
    ASSERT(yamldoc_get(NULL, "name") == NULL);

    /* typed accessors */
    const char *s = NULL;
    int64_t i = 0;
    int b = -1;
    ASSERT_EQ(yamldoc_get_string(&d, root, "dataset_name", 1, &s, &err), 0);
    ASSERT_EQ(strcmp(s, "cora"), 0);
    ASSERT_EQ(yamldoc_get_int(&d, t0, "num_classes", 1, &i, &err), 0);
    ASSERT_EQ(i, 7);
    ASSERT_EQ(yamldoc_get_bool(&d, data->items[1], "in_memory", 1, &b, &err), 0);
    ASSERT_EQ(b, 0);
    /* optional and absent (or null): success, output untouched */
    i = 42;
    ASSERT_EQ(yamldoc_get_int(&d, t0, "missing", 0, &i, &err), 0);
    ASSERT_EQ(i, 42);
    ASSERT_EQ(yamldoc_get_int(&d, root, "empty", 0, &i, &err), 0);
    ASSERT_EQ(i, 42);
    s = "keep";
    ASSERT_EQ(yamldoc_get_string(&d, root, "empty", 0, &s, &err), 0);
    ASSERT_EQ(strcmp(s, "keep"), 0);
    yamldoc_free(&d);
    yamldoc_free(&d); /* twice is safe */
    yamldoc_free(NULL);
}

TEST(accessor_errors) {
    yamldoc d;
    cgnn_err err = {0};
    ASSERT_EQ(parse(&d, DOC, &err), 0);
    const yamldoc_node *root = d.root;
    const yamldoc_node *t0 = yamldoc_get(root, "tasks")->items[0];
    int64_t i;
    int b;
    const char *s;

    ASSERT_EQ(yamldoc_get_int(&d, root, "bad_int", 1, &i, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "cfg.yaml: bad_int (line 14): expected an integer, got 'abc'");

    ASSERT_EQ(yamldoc_get_bool(&d, root, "bad_bool", 1, &b, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "cfg.yaml: bad_bool (line 15): expected true or false, got 'yes'");

    ASSERT_EQ(yamldoc_get_int(&d, t0, "ratio", 1, &i, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "tasks[0].ratio (line 5): expected an integer, got '0.5'");

    err_clear(&err);
    ASSERT_EQ(yamldoc_get_int(&d, t0, "num_nodes", 1, &i, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "cfg.yaml: tasks[0]: missing key 'num_nodes'");

    ASSERT_EQ(yamldoc_get_string(&d, root, "nested", 1, &s, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "nested (line 16): expected a string, got a mapping");

    ASSERT_EQ(yamldoc_get_string(&d, root, "empty", 1, &s, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "empty (line 17): expected a string, got an empty value");

    ASSERT_EQ(yamldoc_expect_kind(&d, yamldoc_get(root, "tasks"), YAMLDOC_MAPPING, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "cfg.yaml: tasks (line 3): expected a mapping, got a list");
    ASSERT_EQ(yamldoc_expect_kind(&d, yamldoc_get(root, "dataset_name"), YAMLDOC_SEQUENCE, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "dataset_name (line 1): expected a list, got 'cora'");
    ASSERT_EQ(yamldoc_expect_kind(&d, root, YAMLDOC_MAPPING, &err), 0);

    /* get on a non-mapping parent */
    ASSERT_EQ(yamldoc_get_int(&d, yamldoc_get(root, "tasks"), "x", 1, &i, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "expected a mapping");
    yamldoc_free(&d);
}

TEST(check_keys_suggests) {
    yamldoc d;
    cgnn_err err = {0};
    ASSERT_EQ(parse(&d, "name: nc\nnum_clases: 7\n", &err), 0);
    static const char *const allowed[] = {"name", "num_classes", "train_set", NULL};
    ASSERT_EQ(yamldoc_check_keys(&d, d.root, allowed, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    ASSERT_STR_CONTAINS(err.msg, "cfg.yaml: num_clases (line 2): unknown key 'num_clases'");
    ASSERT_STR_CONTAINS(err.msg, "did you mean 'num_classes'?");
    yamldoc_free(&d);

    ASSERT_EQ(parse(&d, "name: nc\nsomething_else: 7\n", &err), 0);
    ASSERT_EQ(yamldoc_check_keys(&d, d.root, allowed, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "unknown key 'something_else'");
    ASSERT(strstr(err.msg, "did you mean") == NULL);
    ASSERT_STR_CONTAINS(err.msg, "allowed: name, num_classes, train_set");
    yamldoc_free(&d);

    ASSERT_EQ(parse(&d, "name: nc\nnum_classes: 7\n", &err), 0);
    ASSERT_EQ(yamldoc_check_keys(&d, d.root, allowed, &err), 0);
    yamldoc_free(&d);

    ASSERT_EQ(yamldoc_edit_distance("kitten", "sitting"), 3);
    ASSERT_EQ(yamldoc_edit_distance("", "abc"), 3);
    ASSERT_EQ(yamldoc_edit_distance("abc", ""), 3);
    ASSERT_EQ(yamldoc_edit_distance("same", "same"), 0);
    ASSERT_EQ(yamldoc_edit_distance("num_clases", "num_classes"), 1);
}

/* Parses text, expects failure with a message containing want. */
static int expect_parse_error(const char *text, const char *want) {
    yamldoc d;
    cgnn_err err = {0};
    int rc = parse(&d, text, &err);
    int ok = rc == -1 && err.code == CGNN_ERR_INPUT && strstr(err.msg, want) && d.root == NULL;
    if (!ok) fprintf(stderr, "  rc %d msg '%s' (wanted '%s')\n", rc, err.msg, want);
    yamldoc_free(&d);
    return ok ? 0 : -1;
}

TEST(malformed_yaml) {
    ASSERT_EQ(expect_parse_error("a: [1, 2\nb: 3\n", "cfg.yaml:2:2: did not find expected ',' or ']'"), 0);
    ASSERT_EQ(expect_parse_error("a: 1\n b: 2\n", "cfg.yaml:2:3: mapping values are not allowed"), 0);
    ASSERT_EQ(expect_parse_error("a:\n  - x\n  y: 2\n", "cfg.yaml:3:3:"), 0);
    ASSERT_EQ(expect_parse_error("a: 'open\n", "cfg.yaml:2:1: found unexpected end of stream"), 0);
    ASSERT_EQ(expect_parse_error("a: 1\n\tb: 2\n", "cfg.yaml:2:1: found a tab character"), 0);
    ASSERT_EQ(expect_parse_error("a: 1\na: 2\n", "cfg.yaml:2:1: duplicate key 'a'"), 0);
    ASSERT_EQ(expect_parse_error("a: 1\n---\nb: 2\n", "cfg.yaml:2:1: more than one YAML document"), 0);
    ASSERT_EQ(expect_parse_error("a: ok\nb: \xff\n", "cfg.yaml:2:4: invalid leading UTF-8 octet"), 0);
    ASSERT_EQ(expect_parse_error("a: *nope\n", "cfg.yaml:1:4: found undefined alias 'nope'"), 0);
    ASSERT_EQ(expect_parse_error("a: &x [1, *x]\n", "recursive alias 'x'"), 0);
    ASSERT_EQ(expect_parse_error("? [a]\n: 1\n", "complex mapping keys are not supported"), 0);
    /* "billion laughs": alias expansion is bounded */
    ASSERT_EQ(expect_parse_error("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                                 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                                 "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                                 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                                 "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                                 "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                                 "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n",
                                 "too many nodes"),
              0);
    /* a small document of aliases to one long scalar: the budget counts bytes, not nodes
     * (66 KB of text would expand to ~130 MB) */
    {
        const size_t big = 64 * 1024, refs = 2000;
        char *text = malloc(big + refs * 4 + 64);
        size_t n = (size_t)sprintf(text, "s: &s ");
        memset(text + n, 'x', big);
        n += big;
        n += (size_t)sprintf(text + n, "\nl: [");
        for (size_t i = 0; i < refs; i++) n += (size_t)sprintf(text + n, "%s*s", i ? "," : "");
        n += (size_t)sprintf(text + n, "]\n");
        yamldoc doc;
        cgnn_err err = {0};
        ASSERT_EQ(yamldoc_parse(&doc, text, n, "bomb.yaml", &err), -1);
        ASSERT_EQ(err.code, CGNN_ERR_INPUT);
        ASSERT_STR_CONTAINS(err.msg, "too many nodes or bytes");
        free(text);
    }
    /* deep nesting fails cleanly */
    char deep[2100];
    memset(deep, '[', 1000);
    memset(deep + 1000, ']', 1000);
    deep[2000] = '\0';
    ASSERT_EQ(expect_parse_error(deep, "nesting too deep"), 0);
}

TEST(aliases_empty_and_load) {
    yamldoc d;
    cgnn_err err = {0};
    ASSERT_EQ(parse(&d, "base: &B {lr: 0.1, dims: [1, 2]}\ncopy: *B\nname: &N x\nother: *N\n", &err), 0);
    const yamldoc_node *c = yamldoc_get(d.root, "copy");
    ASSERT(c && c->kind == YAMLDOC_MAPPING && c->len == 2);
    const yamldoc_node *dims = yamldoc_get(c, "dims");
    ASSERT_EQ(strcmp(dims->items[1]->path, "copy.dims[1]"), 0);
    ASSERT_EQ(strcmp(dims->items[1]->scalar, "2"), 0);
    ASSERT_EQ(strcmp(yamldoc_get(d.root, "other")->scalar, "x"), 0);
    yamldoc_free(&d);

    ASSERT_EQ(parse(&d, "", &err), 0);
    ASSERT(d.root == NULL);
    ASSERT_EQ(yamldoc_expect_kind(&d, d.root, YAMLDOC_MAPPING, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "cfg.yaml: empty document");
    yamldoc_free(&d);

    /* from a file */
    char *dir = test_tmpdir();
    const char text[] = "a: 1\nb:\n  c: [x, y]\n";
    ASSERT_EQ(test_write_file(dir, "ok.yaml", text, sizeof text - 1), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/ok.yaml", dir);
    ASSERT_EQ(yamldoc_load(&d, path, &err), 0);
    ASSERT_EQ(strcmp(d.file, path), 0);
    const yamldoc_node *cc = yamldoc_get(yamldoc_get(d.root, "b"), "c");
    ASSERT_EQ(cc->line, 3);
    ASSERT_EQ(strcmp(cc->items[1]->path, "b.c[1]"), 0);
    yamldoc_free(&d);
    unlink(path);

    const char bad[] = "a: 1\nb: [\n";
    ASSERT_EQ(test_write_file(dir, "bad.yaml", bad, sizeof bad - 1), 0);
    snprintf(path, sizeof path, "%s/bad.yaml", dir);
    ASSERT_EQ(yamldoc_load(&d, path, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    char want[4200];
    snprintf(want, sizeof want, "%s:3:1: ", path);
    ASSERT_STR_CONTAINS(err.msg, want);
    yamldoc_free(&d);
    unlink(path);

    snprintf(path, sizeof path, "%s/missing.yaml", dir);
    ASSERT_EQ(yamldoc_load(&d, path, &err), -1);
    ASSERT_EQ(err.code, CGNN_ERR_INPUT);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    ASSERT_STR_CONTAINS(err.msg, want);
    yamldoc_free(&d);

    ASSERT_EQ(yamldoc_load(&d, dir, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "it is a directory, not a regular file");
    rmdir(dir);
    free(dir);
}

TEST(strict_scalars) {
    int64_t i = 0;
    ASSERT_EQ(yamldoc_parse_int("42", &i), 0);
    ASSERT_EQ(i, 42);
    ASSERT_EQ(yamldoc_parse_int("-7", &i), 0);
    ASSERT_EQ(i, -7);
    ASSERT_EQ(yamldoc_parse_int("+3", &i), 0);
    ASSERT_EQ(i, 3);
    ASSERT_EQ(yamldoc_parse_int("9223372036854775807", &i), 0);
    ASSERT(i == INT64_MAX);
    ASSERT_EQ(yamldoc_parse_int("-9223372036854775808", &i), 0);
    ASSERT(i == INT64_MIN);
    i = 5;
    const char *bad_ints[] = {"9223372036854775808", "-9223372036854775809", "12abc", "", " 1",
                              "1 ", "0x10", "1.0", "1e3", "+", "-", "--1", "abc", NULL};
    for (const char **s = bad_ints; *s; s++)
        if (yamldoc_parse_int(*s, &i) != -1) TEST_FAIL_("parse_int accepted '%s'", *s);
    ASSERT_EQ(i, 5);
    ASSERT_EQ(yamldoc_parse_int(NULL, &i), -1);

    double x = 0;
    ASSERT_EQ(yamldoc_parse_double("1.5", &x), 0);
    ASSERT_NEAR(x, 1.5, 0);
    ASSERT_EQ(yamldoc_parse_double("-2e-3", &x), 0);
    ASSERT_NEAR(x, -0.002, 1e-15);
    ASSERT_EQ(yamldoc_parse_double("3", &x), 0);
    ASSERT_NEAR(x, 3, 0);
    ASSERT_EQ(yamldoc_parse_double(".5", &x), 0);
    ASSERT_NEAR(x, 0.5, 0);
    ASSERT_EQ(yamldoc_parse_double(".inf", &x), 0);
    ASSERT(isinf(x) && x > 0);
    ASSERT_EQ(yamldoc_parse_double("-.Inf", &x), 0);
    ASSERT(isinf(x) && x < 0);
    ASSERT_EQ(yamldoc_parse_double(".nan", &x), 0);
    ASSERT(isnan(x));
    const char *bad_doubles[] = {"", "abc", "1.0x", "1.5 ", " 1.5", "1e999", "0x1p3", "1,5", "--1", NULL};
    for (const char **s = bad_doubles; *s; s++)
        if (yamldoc_parse_double(*s, &x) != -1) TEST_FAIL_("parse_double accepted '%s'", *s);

    int b = -1;
    ASSERT_EQ(yamldoc_parse_bool("true", &b), 0);
    ASSERT_EQ(b, 1);
    ASSERT_EQ(yamldoc_parse_bool("FALSE", &b), 0);
    ASSERT_EQ(b, 0);
    ASSERT_EQ(yamldoc_parse_bool("True", &b), 0);
    ASSERT_EQ(b, 1);
    const char *bad_bools[] = {"yes", "no", "1", "0", "on", "truee", "", " true", NULL};
    for (const char **s = bad_bools; *s; s++)
        if (yamldoc_parse_bool(*s, &b) != -1) TEST_FAIL_("parse_bool accepted '%s'", *s);
}

int main(void) {
    RUN(structure_paths_lines);
    RUN(accessor_errors);
    RUN(check_keys_suggests);
    RUN(malformed_yaml);
    RUN(aliases_empty_and_load);
    RUN(strict_scalars);
    return test_summary();
}
