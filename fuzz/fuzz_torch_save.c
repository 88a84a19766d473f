/* fuzz_torch_save.c — libFuzzer target: the PyTorch zip checkpoint reader
 * (torch_save_read_header, torch_save_read_tensor), its bare-tensor reader (torch_save_read_npy,
 * GraphBolt's format: torch) and GiGL's layout on top of it
 * (gigl_ckpt_read: keys mapped back, the head taken into the last layer, the architecture read
 * off the keys).
 *
 * Input: a whole .pt file. The reader accepts it (then every tensor is read into a buffer of
 * its declared size, which the file must hold, and the key lookup finds each key) or rejects it
 * with an input error naming the file; gigl_ckpt_read does the same on the same bytes and, when
 * it accepts, returns tensors whose sizes match their shapes.
 */
#include "fuzz_util.h"
#include "io/torch_save.h"
#include "train/gigl_ckpt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[4096];
    fuzz_write("input.pt", data, size, path);
    ts_file f;
    cgnn_err err = {0};
    int rc = torch_save_read_header(&f, path, &err);
    fuzz_check(rc, &err, path);
    if (rc == 0) {
        FUZZ_ASSERT(f.n >= 0 && f.n <= TORCH_SAVE_MAX_TENSORS && f.n_meta >= 0);
        for (int i = 0; i < f.n; i++) {
            FUZZ_ASSERT(f.ndims[i] >= 0 && f.ndims[i] <= TORCH_SAVE_MAX_DIMS && f.names[i][0]);
            const int64_t k = torch_save_numel(&f, i);
            FUZZ_ASSERT(k >= 0 && k <= (int64_t)size / 4); /* the data is in the file */
            FUZZ_ASSERT(f.data_offsets[i] >= 0 && f.data_offsets[i] + 4 * k <= (int64_t)size);
            FUZZ_ASSERT(torch_save_find(&f, f.names[i]) <= i);
            float *buf = malloc((size_t)(k ? k : 1) * sizeof(float));
            err = (cgnn_err){0};
            int r = torch_save_read_tensor(&f, i, buf, &err);
            fuzz_check(r, &err, path); /* a CRC mismatch is an input error too */
            free(buf);
        }
        for (int m = 0; m < f.n_meta; m++) FUZZ_ASSERT(torch_save_meta(&f, f.meta[2 * m]) != NULL);
        torch_save_free(&f);
    }
    npy_array a;
    err = (cgnn_err){0};
    rc = torch_save_read_npy(&a, path, &err);
    fuzz_check(rc, &err, path);
    if (rc == 0) {
        int64_t k = 1;
        for (int d = 0; d < NPY_MAX_DIMS; d++) {
            FUZZ_ASSERT(a.shape[d] >= 0 && (d < a.ndim || a.shape[d] == 1));
            k *= a.shape[d];
        }
        FUZZ_ASSERT(a.ndim >= 0 && a.ndim <= NPY_MAX_DIMS && a.count == k && !a.fortran_order);
        const size_t bytes = (size_t)k * npy_dtype_size(a.dtype);
        FUZZ_ASSERT(bytes <= 2 * size && (k == 0 || (a.data && a.data == a.owned))); /* (int16, bfloat16 widen) */
        volatile unsigned char sink = bytes ? ((const unsigned char *)a.data)[bytes - 1] : 0; /* ASan */
        (void)sink;
        npy_close(&a);
        FUZZ_ASSERT(a.owned == NULL);
    }
    st_file s;
    err = (cgnn_err){0};
    rc = gigl_ckpt_read(&s, path, &err);
    fuzz_check(rc, &err, path);
    if (rc == 0) {
        for (int i = 0; i < s.n; i++) {
            int64_t k = 1;
            for (int d = 0; d < 4; d++) {
                FUZZ_ASSERT(s.shapes[i][d] >= 0 && (d < s.ndims[i] || s.shapes[i][d] == 1));
                k *= s.shapes[i][d];
            }
            FUZZ_ASSERT(k <= (int64_t)size / 4 && (k == 0 || s.data[i]));
            volatile float sink = k ? s.data[i][k - 1] : 0.0f; /* ASan: the whole tensor is there */
            (void)sink;
        }
        FUZZ_ASSERT(safetensors_meta(&s, "cgnn_model") != NULL || s.n_meta >= 0);
        safetensors_free(&s);
    }
    return 0;
}
