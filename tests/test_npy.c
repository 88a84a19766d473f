/* test_npy.c — .npy reader/writer: round trips for every dtype, hand-made version 2.0/3.0
 * headers, and every kind of bad file (the error must name the file and the problem). */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy.h"
#include "test.h"

/* Joins dir/name into out[4096]. */
static void join(char *out, const char *dir, const char *name) { snprintf(out, 4096, "%s/%s", dir, name); }

/* Builds a .npy image: magic, version major.0, the header dict padded with spaces to a multiple
 * of 64 and ended by '\n', then data. Returns its length. hlen_override >= 0 replaces the
 * declared header length (to make truncated files). */
static size_t make_npy(unsigned char *buf, int major, const char *dict, const void *data,
                       size_t data_len, long hlen_override) {
    size_t pre = major == 1 ? 10 : 12;
    size_t dlen = strlen(dict);
    size_t total = (pre + dlen + 1 + 63) / 64 * 64;
    size_t hlen = total - pre;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    size_t declared = hlen_override >= 0 ? (size_t)hlen_override : hlen;
    if (major == 1) {
        buf[8] = (unsigned char)(declared & 0xff);
        buf[9] = (unsigned char)(declared >> 8);
    } else {
        for (int i = 0; i < 4; i++) buf[8 + i] = (unsigned char)(declared >> (8 * i));
    }
    memcpy(buf + pre, dict, dlen);
    memset(buf + pre + dlen, ' ', hlen - dlen - 1);
    buf[total - 1] = '\n';
    if (data_len) memcpy(buf + total, data, data_len);
    return total + data_len;
}

static void remove_file(const char *dir, const char *name) {
    char p[4096];
    join(p, dir, name);
    unlink(p);
}

TEST(round_trip_every_dtype) {
    char *dir = test_tmpdir();
    for (int dt = 0; dt < NPY_DTYPE_COUNT; dt++) {
        for (int ndim = 1; ndim <= 2; ndim++) {
            int64_t shape[2] = {ndim == 1 ? 7 : 3, 5};
            size_t count = (size_t)(shape[0] * (ndim == 2 ? shape[1] : 1));
            size_t bytes = count * npy_dtype_size((npy_dtype)dt);
            unsigned char data[3 * 5 * 8];
            for (size_t i = 0; i < bytes; i++) data[i] = (unsigned char)(i * 37 + 11 + dt);
            char name[64], path[4096];
            snprintf(name, sizeof name, "a_%s_%dd.npy", npy_dtype_name((npy_dtype)dt), ndim);
            join(path, dir, name);
            cgnn_err err = {0};
            ASSERT_EQ(npy_write(path, (npy_dtype)dt, ndim, shape, data, &err), 0);
            npy_array a;
            ASSERT_EQ(npy_open(&a, path, ndim == 1, &err), 0);
            ASSERT_EQ(a.dtype, dt);
            ASSERT_EQ(a.ndim, ndim);
            ASSERT_EQ(a.shape[0], shape[0]);
            if (ndim == 2) ASSERT_EQ(a.shape[1], shape[1]);
            ASSERT_EQ(a.count, (int64_t)count);
            ASSERT(memcmp(a.data, data, bytes) == 0);
            if (npy_dtype_is_int(a.dtype) && a.dtype == NPY_DTYPE_INT32) {
                int32_t v;
                memcpy(&v, data + 4, 4);
                ASSERT_EQ(npy_get_int(&a, 1), v);
            }
            npy_close(&a);
            npy_close(&a); /* twice is safe */
            unlink(path);
        }
    }
    /* An empty array (0,) and a 0-d scalar. */
    char path[4096];
    join(path, dir, "empty.npy");
    cgnn_err err = {0};
    int64_t zero = 0;
    ASSERT_EQ(npy_write(path, NPY_DTYPE_FLOAT32, 1, &zero, NULL, &err), 0);
    npy_array a;
    ASSERT_EQ(npy_open(&a, path, 1, &err), 0);
    ASSERT_EQ(a.count, 0);
    ASSERT_EQ(a.shape[0], 0);
    npy_close(&a);
    unlink(path);
    rmdir(dir);
    free(dir);
}

TEST(version_2_and_3_headers) {
    char *dir = test_tmpdir();
    const float vals[3] = {1.5f, -2.0f, 3.25f};
    unsigned char buf[256];
    for (int major = 1; major <= 3; major++) {
        size_t n = make_npy(buf, major, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                            vals, sizeof vals, -1);
        char name[32], path[4096];
        snprintf(name, sizeof name, "v%d.npy", major);
        ASSERT_EQ(test_write_file(dir, name, buf, n), 0);
        join(path, dir, name);
        cgnn_err err = {0};
        npy_array a;
        if (npy_open(&a, path, 0, &err) != 0) TEST_FAIL_("version %d: %s", major, err.msg);
        ASSERT_EQ(a.dtype, NPY_DTYPE_FLOAT32);
        ASSERT_EQ(a.ndim, 1);
        ASSERT_EQ(a.shape[0], 3);
        ASSERT(memcmp(a.data, vals, sizeof vals) == 0);
        npy_close(&a);
        unlink(path);
    }
    /* A 2-D int64 array in a 3.0 file, with the byte-order-free '|u1' alongside. */
    int64_t ids[4] = {0, 1, 2, 3};
    size_t n = make_npy(buf, 3, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", ids,
                        sizeof ids, -1);
    ASSERT_EQ(test_write_file(dir, "v3i8.npy", buf, n), 0);
    char path[4096];
    join(path, dir, "v3i8.npy");
    npy_array a;
    cgnn_err err = {0};
    ASSERT_EQ(npy_open(&a, path, 1, &err), 0);
    ASSERT_EQ(a.shape[1], 2);
    ASSERT_EQ(npy_get_int(&a, 3), 3);
    npy_close(&a);
    unlink(path);
    rmdir(dir);
    free(dir);
}

TEST(fortran_order_any_order) {
    char *dir = test_tmpdir();
    unsigned char buf[256];
    int32_t colmajor[6] = {1, 4, 2, 5, 3, 6}; /* (2, 3) [[1, 2, 3], [4, 5, 6]] column-major */
    size_t n = make_npy(buf, 1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", colmajor,
                        sizeof colmajor, -1);
    ASSERT_EQ(test_write_file(dir, "f.npy", buf, n), 0);
    char path[4096];
    join(path, dir, "f.npy");
    npy_array a;
    cgnn_err err = {0};
    ASSERT_EQ(npy_open(&a, path, 0, &err), -1); /* plain npy_open: C order only */
    ASSERT_STR_CONTAINS(err.msg, "fortran_order is True");
    ASSERT_EQ(npy_open_any_order(&a, path, 0, &err), 0);
    ASSERT_EQ(a.fortran_order, 1);
    ASSERT_EQ(a.shape[0], 2);
    ASSERT_EQ(a.shape[1], 3);
    ASSERT_EQ(npy_get_int(&a, 0 + 2 * 1), 2); /* element (0, 1) */
    npy_close(&a);
    unlink(path);

    /* one dimension > 1: both orders are the same bytes, so it reads as C order */
    n = make_npy(buf, 1, "{'descr': '<i4', 'fortran_order': True, 'shape': (6, 1), }", colmajor,
                 sizeof colmajor, -1);
    ASSERT_EQ(test_write_file(dir, "f61.npy", buf, n), 0);
    join(path, dir, "f61.npy");
    ASSERT_EQ(npy_open_any_order(&a, path, 1, &err), 0);
    ASSERT_EQ(a.fortran_order, 0);
    npy_close(&a);
    ASSERT_EQ(npy_open(&a, path, 1, &err), -1);
    unlink(path);

    /* any_order still checks everything else */
    n = make_npy(buf, 1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", colmajor, 20, -1);
    ASSERT_EQ(test_write_file(dir, "ft.npy", buf, n), 0);
    join(path, dir, "ft.npy");
    ASSERT_EQ(npy_open_any_order(&a, path, 1, &err), -1);
    ASSERT_STR_CONTAINS(err.msg, "truncated data");
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* Writes bytes to dir/name, opens it, expects an input error naming the file and `problem`. */
static int expect_bad(const char *dir, const char *name, const void *bytes, size_t n,
                      const char *problem) {
    char path[4096];
    join(path, dir, name);
    if (bytes && test_write_file(dir, name, bytes, n) != 0) return -1;
    cgnn_err err = {0};
    npy_array a;
    int rc = npy_open(&a, path, 1, &err);
    int ok = rc == -1 && err.code == CGNN_ERR_INPUT && strstr(err.msg, path) && strstr(err.msg, problem) &&
             a.map_base == NULL && a.data == NULL;
    if (!ok) fprintf(stderr, "  %s: rc %d code %d msg '%s' (wanted '%s')\n", name, rc, err.code, err.msg, problem);
    if (rc == 0) npy_close(&a);
    if (bytes) unlink(path);
    return ok ? 0 : -1;
}

TEST(bad_files) {
    char *dir = test_tmpdir();
    unsigned char buf[512];
    float vals[4] = {1, 2, 3, 4};
    size_t n;

    ASSERT_EQ(expect_bad(dir, "missing.npy", NULL, 0, "cannot open"), 0);

    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", vals, 16, -1);
    buf[5] = 'Z';
    ASSERT_EQ(expect_bad(dir, "magic.npy", buf, n, "bad magic"), 0);
    ASSERT_EQ(expect_bad(dir, "tiny.npy", "\x93NUM", 4, "not a .npy file"), 0);

    /* Header length says 118 bytes, the file ends long before. */
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", NULL, 0, -1);
    ASSERT_EQ(expect_bad(dir, "trunc_header.npy", buf, 40, "truncated header"), 0);
    n = make_npy(buf, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", NULL, 0, 5000);
    ASSERT_EQ(expect_bad(dir, "trunc_header2.npy", buf, n, "truncated header"), 0);
    ASSERT_EQ(expect_bad(dir, "trunc_prefix2.npy", buf, 11, "truncated header"), 0);

    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", vals, 12, -1);
    ASSERT_EQ(expect_bad(dir, "trunc_data.npy", buf, n, "truncated data"), 0);

    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", vals, 16, -1);
    ASSERT_EQ(expect_bad(dir, "extra.npy", buf, n, "after the declared shape"), 0);

    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", vals, 16, -1);
    ASSERT_EQ(expect_bad(dir, "fortran.npy", buf, n, "fortran_order is True"), 0);

    n = make_npy(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", vals, 16, -1);
    ASSERT_EQ(expect_bad(dir, "bigendian.npy", buf, n, "big-endian dtype '>f4'"), 0);

    n = make_npy(buf, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", vals, 16, -1);
    ASSERT_EQ(expect_bad(dir, "complex.npy", buf, n, "unsupported dtype '<c8'"), 0);

    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,}", vals, 16, -1);
    ASSERT_EQ(expect_bad(dir, "corrupt1.npy", buf, n, "corrupt header"), 0);
    n = make_npy(buf, 1, "not a dict at all", vals, 16, -1);
    ASSERT_EQ(expect_bad(dir, "corrupt2.npy", buf, n, "corrupt header"), 0);
    n = make_npy(buf, 1, "{'descr': '<f4', 'shape': (4,), }", vals, 16, -1);
    ASSERT_EQ(expect_bad(dir, "corrupt3.npy", buf, n, "missing 'fortran_order'"), 0);

    /* Found by fuzz_npy: a header length other than numpy's padding left the data at byte 69,
     * misaligned for its int32 items (every typed read of it was undefined behaviour). */
    {
        const char *d = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
        const size_t dl = strlen(d), hl = 59; /* 10 + 59 = 69 bytes before the data */
        const int32_t v[2] = {1, 2};
        ASSERT(dl + 1 <= hl);
        memcpy(buf, "\x93NUMPY\x01\x00", 8);
        buf[8] = (unsigned char)hl, buf[9] = 0;
        memcpy(buf + 10, d, dl);
        memset(buf + 10 + dl, ' ', hl - dl - 1);
        buf[10 + hl - 1] = '\n';
        memcpy(buf + 10 + hl, v, sizeof v);
        ASSERT_EQ(expect_bad(dir, "misaligned.npy", buf, 10 + hl + sizeof v, "not a multiple of the 4-byte int32"), 0);
    }

    /* Found by fuzz_npy: 2^62 int64 elements are 2^65 bytes, which wrapped to 0 and matched
     * an empty data section, so the array was accepted with 2^62 elements and no data. */
    n = make_npy(buf, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4611686018427387904, ), }", NULL, 0, -1);
    ASSERT_EQ(expect_bad(dir, "wrap.npy", buf, n, "overflows"), 0);
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 1073741824, 4), }", NULL, 0, -1);
    ASSERT_EQ(expect_bad(dir, "wrap2.npy", buf, n, "overflows"), 0);

    n = make_npy(buf, 7, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", vals, 16, -1);
    ASSERT_EQ(expect_bad(dir, "version7.npy", buf, n, "unsupported .npy format version 7"), 0);

    /* A directory is not a .npy file. */
    char sub[4096];
    join(sub, dir, "subdir.npy");
    ASSERT_EQ(mkdir(sub, 0700), 0);
    ASSERT_EQ(expect_bad(dir, "subdir.npy", NULL, 0, "not a regular file"), 0);
    rmdir(sub);

    remove_file(dir, "missing.npy");
    rmdir(dir);
    free(dir);
}

int main(void) {
    RUN(round_trip_every_dtype);
    RUN(version_2_and_3_headers);
    RUN(bad_files);
    RUN(fortran_order_any_order);
    return test_summary();
}
