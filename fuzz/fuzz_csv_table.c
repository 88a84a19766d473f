/* fuzz_csv_table.c — libFuzzer target: io/csv.h, the numeric CSV reader of `cgnn import csv`
 * (edge lists, features, labels).
 *
 * Input: the bytes of a CSV file, read three ways: integers of any width, integers of two columns
 * (an edge list), float32 of any width (features). Each read returns a table of rows >= 1 and the
 * asked width with finite floats, or an input error naming the file; never a crash or a leak.
 */
#include <math.h>

#include "fuzz_util.h"
#include "io/csv.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        log_level = 0; /* no "header line skipped" per input */
        ready = 1;
    }
    char path[4096];
    fuzz_write("t.csv", data, size, path);
    static const struct {
        csv_kind kind;
        int64_t cols;
    } ways[] = {{CSV_INT64, 0}, {CSV_INT64, 2}, {CSV_FLOAT32, 0}};
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        csv_table t;
        cgnn_err err = {0};
        const int rc = csv_read(path, ways[w].kind, ways[w].cols, &t, &err);
        fuzz_check(rc, &err, path);
        if (rc != 0) {
            FUZZ_ASSERT(t.data == NULL && t.rows == 0);
            continue;
        }
        FUZZ_ASSERT(t.rows >= 1 && t.cols >= 1 && t.data != NULL);
        if (ways[w].cols) FUZZ_ASSERT(t.cols == ways[w].cols);
        if (ways[w].kind == CSV_FLOAT32)
            for (int64_t i = 0; i < t.rows * t.cols; i++) FUZZ_ASSERT(isfinite(((const float *)t.data)[i]));
        csv_free(&t);
    }
    return 0;
}
