/* fuzz_npy.c — libFuzzer target: the .npy reader (npy_open, npy_open_any_order).
 *
 * Input: a whole .npy file (magic, version, header dict, data). Both entry points must accept
 * it or reject it with an input error naming the file; an accepted array must describe exactly
 * the mapped data, which is read in full (npy_get_int for integer dtypes).
 */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[4096];
    fuzz_write("input.npy", data, size, path);
    for (int any_order = 0; any_order < 2; any_order++) {
        npy_array a;
        cgnn_err err = {0};
        int rc = any_order ? npy_open_any_order(&a, path, 0, &err) : npy_open(&a, path, 0, &err);
        fuzz_check(rc, &err, path);
        if (rc != 0) {
            npy_close(&a); /* safe on the zeroed array a failed open leaves */
            continue;
        }
        FUZZ_ASSERT(a.ndim >= 0 && a.ndim <= NPY_MAX_DIMS && a.dtype >= 0 && a.dtype < NPY_DTYPE_COUNT);
        FUZZ_ASSERT(any_order || !a.fortran_order);
        int64_t count = 1;
        for (int d = 0; d < NPY_MAX_DIMS; d++) {
            FUZZ_ASSERT(a.shape[d] >= 0 && (d < a.ndim || a.shape[d] == 1));
            count *= a.shape[d];
        }
        FUZZ_ASSERT(count == a.count);
        size_t bytes;
        FUZZ_ASSERT(!__builtin_mul_overflow((size_t)a.count, npy_dtype_size(a.dtype), &bytes));
        const char *begin = a.data, *map = a.map_base;
        FUZZ_ASSERT(begin >= map && bytes <= a.map_len && (size_t)(begin - map) <= a.map_len - bytes);
        unsigned sum = 0;
        for (size_t i = 0; i < bytes; i++) sum += (unsigned char)begin[i];
        if (npy_dtype_is_int(a.dtype))
            for (int64_t i = 0; i < a.count; i++) sum += (unsigned)npy_get_int(&a, i);
        volatile unsigned sink = sum;
        (void)sink;
        npy_close(&a);
    }
    return 0;
}
