/* test.h — the test runner shared by every test binary (libuv's TEST_IMPL style).
 *
 *   TEST(name) { ASSERT_EQ(a, b); ... }
 *   int main(void) { RUN(name); ...; return test_summary(); }
 *
 * Every failed ASSERT prints file:line and the values, marks the test failed and returns
 * from it; test_summary() returns non-zero if anything failed, so ctest sees the failure.
 * Tests that cannot run print "SKIP" visibly and are not counted as passed.
 */
#ifndef CGNN_TEST_H
#define CGNN_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* wall seconds since an arbitrary start (each case's time is printed: the suite's cost shows) */
static double test_now_(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int test_failures_ = 0, test_passed_ = 0, test_skipped_ = 0;
static int test_cur_failed_ = 0, test_cur_skipped_ = 0;

#define TEST(name) static void test_##name(void)

#define RUN(name)                                                                              \
    do {                                                                                       \
        test_cur_failed_ = 0;                                                                  \
        test_cur_skipped_ = 0;                                                                 \
        fprintf(stderr, "[ RUN  ] %s\n", #name);                                               \
        const double test_t0_ = test_now_();                                                   \
        test_##name();                                                                         \
        const double test_dt_ = test_now_() - test_t0_;                                        \
        if (test_cur_failed_) {                                                                \
            test_failures_++;                                                                  \
            fprintf(stderr, "[ FAIL ] %s (%.2f s)\n", #name, test_dt_);                        \
        } else if (test_cur_skipped_) {                                                        \
            test_skipped_++;                                                                   \
            fprintf(stderr, "[ SKIP ] %s\n", #name);                                           \
        } else {                                                                               \
            test_passed_++;                                                                    \
            fprintf(stderr, "[  OK  ] %s (%.2f s)\n", #name, test_dt_);                        \
        }                                                                                      \
    } while (0)

#define TEST_FAIL_(...)                                                                        \
    do {                                                                                       \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
        fprintf(stderr, __VA_ARGS__);                                                          \
        fputc('\n', stderr);                                                                   \
        test_cur_failed_ = 1;                                                                  \
        return;                                                                                \
    } while (0)

#define SKIP(...)                                                                              \
    do {                                                                                       \
        fprintf(stderr, "SKIP: ");                                                             \
        fprintf(stderr, __VA_ARGS__);                                                          \
        fputc('\n', stderr);                                                                   \
        test_cur_skipped_ = 1;                                                                 \
        return;                                                                                \
    } while (0)

#define ASSERT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond)) TEST_FAIL_("assertion failed: %s", #cond);                                \
    } while (0)

#define ASSERT_EQ(a, b)                                                                        \
    do {                                                                                       \
        long long a_ = (long long)(a), b_ = (long long)(b);                                    \
        if (a_ != b_) TEST_FAIL_("%s == %s failed: %lld != %lld", #a, #b, a_, b_);             \
    } while (0)

#define ASSERT_NE(a, b)                                                                        \
    do {                                                                                       \
        long long a_ = (long long)(a), b_ = (long long)(b);                                    \
        if (a_ == b_) TEST_FAIL_("%s != %s failed: both %lld", #a, #b, a_);                    \
    } while (0)

#define ASSERT_NEAR(a, b, tol)                                                                 \
    do {                                                                                       \
        double a_ = (double)(a), b_ = (double)(b);                                             \
        if (!(fabs(a_ - b_) <= (tol)))                                                         \
            TEST_FAIL_("%s ~= %s failed: %.9g vs %.9g (tol %g)", #a, #b, a_, b_, (double)(tol)); \
    } while (0)

#define ASSERT_STR_CONTAINS(hay, needle)                                                       \
    do {                                                                                       \
        const char *h_ = (hay), *n_ = (needle);                                                \
        if (!h_ || !strstr(h_, n_)) TEST_FAIL_("'%s' does not contain '%s'", h_ ? h_ : "(null)", n_); \
    } while (0)

/* Exit status: 1 if anything failed; 77 (ctest: "skipped", never "passed") if every case was
 * skipped; else 0. */
static inline int test_summary(void) {
    fprintf(stderr, "%d passed, %d failed, %d skipped\n", test_passed_, test_failures_, test_skipped_);
    if (test_failures_) return 1;
    return (test_skipped_ && !test_passed_) ? 77 : 0;
}

/* A fresh temporary directory for a test (mkdtemp under $TMPDIR or /tmp); caller frees. */
static inline char *test_tmpdir(void) {
    const char *base = getenv("TMPDIR");
    char *p = (char *)malloc(4096);
    snprintf(p, 4096, "%s/cgnn-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(p)) {
        perror("mkdtemp");
        exit(1);
    }
    return p;
}

/* Writes text to dir/name; returns 0 on success. */
static inline int test_write_file(const char *dir, const char *name, const void *data, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, len, f);
    fclose(f);
    return w == len ? 0 : -1;
}

/* The whole file at path (caller frees), its size in *len; NULL if it cannot be opened. */
static inline unsigned char *test_slurp(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc((size_t)(n > 0 ? n : 0) + 1);
    *len = fread(b, 1, (size_t)(n > 0 ? n : 0), fp);
    fclose(fp);
    return b;
}

/* The repository root (CGNN_SOURCE_DIR, set by ctest). */
static inline const char *test_source_dir(void) {
    const char *s = getenv("CGNN_SOURCE_DIR");
    return s ? s : ".";
}

#endif
