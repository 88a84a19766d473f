/* test_fixture.h — reading the PyTorch-written fixtures (scripts/fixtures/make_*.py) in C tests.
 *
 * A test file defines FIX_SUBDIR (its folder under tests/fixtures, e.g. "nn") before including
 * this header; fixture names are relative to that folder. Everything here prints its own error
 * and returns -1, so a test can `if (fix_open(...) != 0) TEST_FAIL_(...)`. */
#ifndef CGNN_TEST_FIXTURE_H
#define CGNN_TEST_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "io/npy.h"
#include "test.h"

#ifndef FIX_SUBDIR
#error "define FIX_SUBDIR (the folder under tests/fixtures) before including test_fixture.h"
#endif

/* The path of fixture `name`: tests/fixtures/FIX_SUBDIR/name under the source tree. Returns a
 * static buffer, overwritten by the next call. */
static inline const char *fix_path(const char *name) {
    static char p[8192];
    snprintf(p, sizeof p, "%s/tests/fixtures/%s/%s", test_source_dir(), FIX_SUBDIR, name);
    return p;
}

/* Opens fixture `name` as *a (owned: npy_close), requiring dtype `want`; 0 or -1 (printed). */
static inline int fix_open(npy_array *a, const char *name, npy_dtype want) {
    cgnn_err err;
    if (npy_open(a, fix_path(name), 0, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    if (a->dtype != want) {
        fprintf(stderr, "%s: dtype %s, want %s\n", a->path, npy_dtype_name(a->dtype), npy_dtype_name(want));
        npy_close(a);
        return -1;
    }
    return 0;
}

#ifdef CGNN_MODEL_H
/* Copies a PyTorch model's weights into m (already model_init'ed) by state_dict key: dir/keys.txt
 * lists the keys in cgnn's tensor order, dir/param.<key>.npy holds each (float32, cgnn's shape).
 * Every key, the order and every shape are checked. Returns 0 or -1 (printed). */
static inline int fix_load_params(model *m, const char *dir) {
    char name[512], line[256];
    snprintf(name, sizeof name, "%s/keys.txt", dir);
    FILE *fp = fopen(fix_path(name), "r");
    if (!fp) {
        fprintf(stderr, "%s: cannot open\n", fix_path(name));
        return -1;
    }
    int t = 0, ok = 1;
    while (ok && fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        if (t >= m->num_tensors || strcmp(line, m->tensors[t].name) != 0) {
            fprintf(stderr, "%s: key %d is '%s', cgnn has '%s'\n", name, t, line,
                    t < m->num_tensors ? m->tensors[t].name : "(none)");
            ok = 0;
            break;
        }
        const model_tensor *mt = &m->tensors[t++];
        npy_array a;
        snprintf(name, sizeof name, "%s/param.%s.npy", dir, mt->name);
        if (fix_open(&a, name, NPY_DTYPE_FLOAT32) != 0) {
            ok = 0;
            break;
        }
        int same_shape = a.ndim == mt->ndim;
        for (int k = 0; k < mt->ndim && same_shape; k++) same_shape = a.shape[k] == mt->shape[k];
        if (!same_shape) fprintf(stderr, "%s: shape differs from cgnn's %s\n", name, mt->name);
        else memcpy(m->params + mt->offset, a.data, (size_t)mt->numel * sizeof(float));
        ok = same_shape;
        npy_close(&a);
    }
    fclose(fp);
    if (ok && t != m->num_tensors) {
        fprintf(stderr, "%s/keys.txt: %d keys, cgnn has %d tensors\n", dir, t, m->num_tensors);
        ok = 0;
    }
    return ok ? 0 : -1;
}
#endif

#endif
